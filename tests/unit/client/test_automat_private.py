"""The one module that reaches Automat's internals
(wormhole._automat_private): its tracer hook, and its refusal of any
Automat outside the range it was checked with."""

import importlib.util
import io
import os
from importlib import metadata

from automat import MethodicalMachine
from twisted.trial import unittest

from wormhole import _automat_private
from wormhole._automat_private import trace_hook


class TraceHook(unittest.TestCase):
    def test_hook_traces_transitions(self):
        """With Automat's hook, set_trace(tracer) sees old state, input and
        new state of each transition."""
        class M:
            m = MethodicalMachine()
            set_trace = trace_hook(m)

            @m.state(initial=True)
            def a(self): pass  # noqa

            @m.state()
            def b(self): pass  # noqa

            @m.input()
            def go(self): pass  # noqa
            a.upon(go, enter=b, outputs=[])

        seen = []
        machine = M()
        machine.set_trace(lambda old, i, new: seen.append((old, i, new)))
        machine.go()
        self.assertEqual(seen, [("a", "go", "b")])

    def test_debug_set_trace_on_a_wormhole(self):
        """w.debug_set_trace writes the Boss's transitions to the file."""
        from twisted.internet.task import Clock

        from wormhole.testing import MEMORY_URL, memory_server
        clock = Clock()
        server = memory_server(clock)
        w = server.create("appid", MEMORY_URL, clock)
        out = io.StringIO()
        w.debug_set_trace("me", which="B", file=out)
        w.allocate_code()
        self.assertIn("me.Boss[S0_empty].allocate_code -> [S1_lonely]", out.getvalue())


class VersionGate(unittest.TestCase):
    def import_with(self, version):
        """Run the module's import afresh (a new module object, not the one
        in sys.modules) as if Automat ``version`` were installed (None:
        none is); returns the new module."""
        real_listdir = os.listdir

        def listdir(path):
            # the .dist-info beside the automat package names its version
            names = [n for n in real_listdir(path) if not n.lower().startswith("automat-")]
            return names + ([] if version is None else [f"automat-{version}.dist-info"])

        def installed(name):
            raise metadata.PackageNotFoundError(name)  # the fallback finds none either
        self.patch(os, "listdir", listdir)
        self.patch(metadata, "version", installed)
        spec = importlib.util.find_spec("wormhole._automat_private")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def test_checked_versions_import(self):
        """The installed Automat is in the checked range, and so are its
        patch releases within it."""
        self.import_with(_automat_private._installed_automat())
        self.import_with("25.4.16")
        self.import_with("25.4.99")

    def test_outside_the_range_fails_loudly(self):
        """Older, newer, a pre-release of the next, or none at all: one
        ImportError naming what was found and the range needed."""
        for version in ("24.8.1", "25.4.15", "25.5.0", "26.1.0", "25.5.0rc1", "banana"):
            # the fresh module's own class, not the one imported here
            e = self.assertRaises(ImportError, self.import_with, version)
            self.assertEqual(type(e).__name__, "AutomatVersionError")
            message = str(e)
            self.assertIn(f"found Automat {version}", message)
            self.assertIn(_automat_private.AUTOMAT_CHECKED, message)
            self.assertNotIn("\n", message)
        e = self.assertRaises(ImportError, self.import_with, None)
        self.assertIn("no installed Automat", str(e))

    def test_same_range_as_pyproject(self):
        """pyproject.toml pins the range this module checks."""
        from ..._paths import REPO_ROOT
        with open(f"{REPO_ROOT}/pyproject.toml", encoding="utf-8") as f:
            text = f.read()
        self.assertIn(f'"automat{_automat_private.AUTOMAT_CHECKED}"', text)
        self.assertNotIn("automat>=24.8", text)
