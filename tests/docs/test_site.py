"""The documentation site (docs/conf.py; ``./dev docs``) builds with
warnings as errors, and its API reference shows every public name.

The real build runs once for the module (``sphinx-build -W`` into a
temporary directory, about half a minute); the planted failures build a
one-page site with the same configuration, to show that a dead link, a
dead heading anchor, a missing diagram and a public name without a
docstring each fail the build.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from twisted.trial import unittest

from .._paths import REPO_ROOT

DOCS = os.path.join(REPO_ROOT, "docs")
_built = {}


def sphinx_build(srcdir, outdir, extra_path=()):
    """``python -m sphinx -W --keep-going -b html``; the finished process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        (os.path.join(REPO_ROOT, "src"),) + tuple(extra_path)
        + tuple(p for p in [env.get("PYTHONPATH")] if p))
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E",
         "-b", "html", srcdir, outdir],
        env=env, capture_output=True, text=True, timeout=600)


def the_site():
    """The real site, built once: (process, output directory)."""
    if not _built:
        out = tempfile.mkdtemp(prefix="wh-docs-")
        _built["out"] = out
        _built["run"] = sphinx_build(DOCS, out)
    return _built["run"], _built["out"]


def tearDownModule():
    if "out" in _built:
        shutil.rmtree(_built["out"], ignore_errors=True)


class Site(unittest.TestCase):
    def test_builds_without_a_warning(self):
        """sphinx-build -W over docs/ exits 0 and says nothing."""
        run, _ = the_site()
        self.assertEqual((run.returncode, run.stderr.strip()), (0, ""),
                         run.stdout + run.stderr)

    def test_reference_lists_every_public_name(self):
        """Every name in wormhole.__all__, wormhole.transfer.__all__ and
        wormhole.transfer_v2.__all__ has its entry in the API reference,
        with the first words of its docstring (a constant: of its
        description)."""
        run, out = the_site()
        self.assertEqual(run.returncode, 0, run.stderr)
        import inspect

        import wormhole
        import wormhole.transfer
        import wormhole.transfer_v2
        pages = {wormhole: "wormhole", wormhole.transfer: "transfer",
                 wormhole.transfer_v2: "transfer_v2"}
        missing = []
        for module, page in pages.items():
            path = os.path.join(out, "reference", page + ".html")
            with open(path, encoding="utf-8") as f:
                html = f.read()
            ids = set(re.findall(r'id="([^"]+)"', html))
            text = _words(_plain(html))
            for name in module.__all__:
                dotted = f"{module.__name__}.{name}"
                if dotted not in ids:
                    missing.append(dotted)
                    continue
                obj = getattr(module, name)
                if inspect.isclass(obj) or inspect.isroutine(obj) or _is_interface(obj):
                    first = _words(" ".join((obj.__doc__ or "").split()[:4]))
                    if not first or first not in text:
                        missing.append(f"{dotted} (its docstring)")
        self.assertEqual(missing, [])

    def test_diagrams_are_embedded(self):
        """Every state-machine SVG of docs/state-machines/ is shown on the
        site (copied into _images by an image of that page)."""
        run, out = the_site()
        self.assertEqual(run.returncode, 0, run.stderr)
        svgs = sorted(n for n in os.listdir(os.path.join(DOCS, "state-machines"))
                      if n.endswith(".svg"))
        shown = set(os.listdir(os.path.join(out, "_images")))
        self.assertEqual([n for n in svgs if n not in shown], [])


def _plain(html):
    """The text of ``html``, tags and entities left out, spaces folded."""
    text = re.sub(r"<[^>]+>", "", html)
    text = text.replace("&quot;", '"').replace("&#39;", "'").replace("&amp;", "&")
    return " ".join(text.split())


def _words(text):
    """The words of ``text`` (markup and quotes left out), one space apart."""
    return " ".join(re.findall(r"\w+", text))


def _is_interface(obj):
    from zope.interface.interface import InterfaceClass
    return isinstance(obj, InterfaceClass)


# one page with one dead thing each, under docs/conf.py's configuration
PLANTED = {
    "a dead link to a page": ("[gone](no-such-page.md)", "cross-reference target not found"),
    "a dead heading anchor": ("[gone](#no-such-heading)", "cross-reference target not found"),
    "a missing diagram": ("![gone](state-machines/gone.svg)", "image file not readable"),
    "a public function without a docstring": (
        "```{eval-rst}\n.. automodule:: planted_module\n```",
        "public function planted_module.undocumented has no docstring"),
}


class PlantedFailures(unittest.TestCase):
    def build(self, body):
        src = tempfile.mkdtemp(prefix="wh-planted-")
        self.addCleanup(shutil.rmtree, src, True)
        shutil.copy(os.path.join(DOCS, "conf.py"), src)
        with open(os.path.join(src, "index.md"), "w", encoding="utf-8") as f:
            f.write(f"# Planted\n\n## A heading\n\n{body}\n")
        with open(os.path.join(src, "planted_module.py"), "w", encoding="utf-8") as f:
            f.write('"""A module."""\n\n\ndef documented():\n    """Yes."""\n\n\n'
                    "def undocumented():\n    pass\n")
        return sphinx_build(src, os.path.join(src, "_build"), extra_path=(src,))

    def test_each_dead_thing_fails_the_build(self):
        """Each planted page fails with its own warning; the same page
        without the dead thing builds."""
        run = self.build("[fine](#a-heading)")
        self.assertEqual(run.returncode, 0, run.stderr)
        for what, (body, warning) in PLANTED.items():
            run = self.build(body)
            self.assertNotEqual(run.returncode, 0, what)
            self.assertIn(warning, run.stderr, what)
