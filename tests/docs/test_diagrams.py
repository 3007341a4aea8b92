"""docs/state-machines/ is what the code generates now (docs/architecture.md,
"Diagrams come from the code").

These run where Graphviz's ``dot`` is not installed: they compare ``.dot``
sources, and each committed ``.svg`` by the SHA-256 of the ``.dot`` it was
drawn from (stamped into the SVG by the generator).
"""

import re
from pathlib import Path

from twisted.trial import unittest

from . import generator
from .generator import generated


def _fix():
    return f"regenerate with: {generator.load().COMMAND}"


class DotFilesAreCurrent(unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()
        self.out = self.gen.OUTPUT

    def test_every_dot_file_matches_the_code(self):
        """Each machine's .dot (and wiring.dot) exists and is byte for byte
        what the generator makes from the code now."""
        missing, differ = [], []
        for name, source in sorted(generated().items()):
            path = self.out / name
            if not path.exists():
                missing.append(name)
            elif path.read_text(encoding="utf-8") != source:
                differ.append(name)
        self.assertEqual((missing, differ), ([], []),
                         f"stale diagrams (missing, different); {_fix()}")

    def test_no_diagram_of_a_machine_that_is_gone(self):
        """No .dot or .svg is left for a machine the code no longer has."""
        wanted = set(generated())
        wanted |= {n[:-len(".dot")] + ".svg" for n in wanted}
        extra = sorted(p.name for p in self.out.iterdir()
                       if p.suffix in (".dot", ".svg") and p.name not in wanted)
        self.assertEqual(extra, [], f"leftover diagrams; {_fix()}")

    def test_every_svg_was_drawn_from_the_current_dot(self):
        """Each .svg exists and carries the digest of the current .dot
        source, so the pictures cannot drift even where `dot` is absent."""
        bad = []
        for name, source in sorted(generated().items()):
            svg = self.out / (name[:-len(".dot")] + ".svg")
            stamp = self.gen.svg_stamp(name, source)
            if not svg.exists() or stamp not in svg.read_text(encoding="utf-8"):
                bad.append(svg.name)
        self.assertEqual(bad, [], "SVGs missing or drawn from an older .dot; "
                         f"{_fix()} on a machine with Graphviz's dot")


class EveryMachineIsWired(unittest.TestCase):
    def test_every_machine_is_reached_by_a_scenario(self):
        """Each discovered machine is reached by some wiring scenario of
        the generator: the wiring picture has no 'not reached' box. A new
        machine fails here until a scenario builds it."""
        source = generated()["wiring.dot"]
        unwired = []
        if "cluster_unwired" in source:
            box = source[source.index("cluster_unwired"):]
            unwired = re.findall(r'^\s*"([^"]+)" \[label=', box, re.MULTILINE)
        self.assertEqual(unwired, [], "add a scenario to SCENARIOS in "
                         "misc/generate-diagrams.py for these")

    def test_scenarios_leave_no_descriptor_open(self):
        """Building every scenario (one builds the relay's Splicer on
        socketpairs) and releasing it leaves no file descriptor open."""
        fds = Path("/proc/self/fd")
        if not fds.is_dir():
            raise unittest.SkipTest("counts descriptors in /proc (Linux)")
        gen = generator.load()
        gen._use_this_checkout()
        generated()  # the modules are imported, the caches are warm

        def build_all():
            for _, build in gen.SCENARIOS:
                with gen._built(build):
                    pass
        build_all()
        before = len(list(fds.iterdir()))
        build_all()
        self.assertEqual(len(list(fds.iterdir())), before)


class IndexListsEveryMachine(unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()
        self.index = (self.gen.OUTPUT / "README.md").read_text(encoding="utf-8")

    def _shown(self):
        # markdown images: ![alt](file.svg)
        return set(re.findall(r"!\[[^\]]*\]\(([^)\s]+\.svg)\)", self.index))

    def test_every_machine_has_its_picture_in_the_index(self):
        """README.md shows the SVG of every discovered machine and of the
        wiring."""
        wanted = {n[:-len(".dot")] + ".svg" for n in generated()}
        missing = sorted(wanted - self._shown())
        self.assertEqual(missing, [], "docs/state-machines/README.md lacks a "
                         "section (picture, role, spec section) for these")

    def test_index_shows_only_existing_diagrams(self):
        """Every picture or .dot the index links to is one the generator
        makes (no section left for a removed or renamed machine)."""
        wanted = set(generated()) | {n[:-len(".dot")] + ".svg" for n in generated()}
        linked = set(re.findall(r"\]\(([^)\s]+\.(?:svg|dot))\)", self.index))
        self.assertEqual(sorted(linked - wanted), [])

    def test_discovery_misses_no_machine_in_src(self):
        """Independently of Automat's discovery, every file in src/ that
        makes a MethodicalMachine or TypeMachineBuilder has at least that
        many machines discovered in its module (a machine made inside a
        function would be invisible to the generator). All of src/ is
        scanned, so a machine outside the package walked fails here too."""
        short = undiscovered(generator.REPO / "src", generated())
        self.assertEqual(short, [], "(module, machines made, machines discovered)")

    def test_undiscovered_sees_a_hidden_machine(self):
        """The cross-check itself: a module that makes a machine the
        discovery did not report is named, with both counts."""
        src = Path(self.mktemp())
        (src / "pkg").mkdir(parents=True)
        (src / "pkg" / "__init__.py").write_text("")
        (src / "pkg" / "seen.py").write_text("m = MethodicalMachine()\n")
        (src / "pkg" / "hidden.py").write_text(
            "def make():\n    return MethodicalMachine()\n"
            "b = TypeMachineBuilder(P, C)\n")
        self.assertEqual(undiscovered(src, {"pkg.seen.m.dot": "", "wiring.dot": ""}),
                         [("pkg.hidden", 2, 0)])


def undiscovered(src, generated_files):
    """[(module, machines made in its source, machines discovered)] for each
    module under ``src`` whose source makes more machines than were found."""
    found = {}
    for name in generated_files:
        parts = name[:-len(".dot")].split(".")
        for i in range(len(parts), 0, -1):
            path = src.joinpath(*parts[:i])
            if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
                module = ".".join(parts[:i])
                found[module] = found.get(module, 0) + 1
                break
    short = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        made = len(re.findall(r"\b(?:MethodicalMachine|TypeMachineBuilder)\(", text))
        rel = path.relative_to(src).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        module = ".".join(parts)
        if made > found.get(module, 0):
            short.append((module, made, found.get(module, 0)))
    return short
