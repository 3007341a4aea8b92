"""The guarded Automat tracer hook (wormhole._tracing)."""

import io

from automat import MethodicalMachine
from twisted.trial import unittest

from wormhole._tracing import trace_hook


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

    def test_missing_hook_is_a_clear_error(self):
        """An Automat without the private hook: the class still builds, and
        asking for a trace says tracing is unavailable."""
        class NoHook:
            pass

        class M:
            set_trace = trace_hook(NoHook())
        e = self.assertRaises(RuntimeError, M().set_trace, print)
        self.assertIn("no transition tracer", str(e))

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
