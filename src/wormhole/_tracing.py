"""Automat's transition tracer, reached the guarded way.

``MethodicalMachine._setTrace`` is private Automat API (``--debug-state``
and ``debug_set_trace`` use it, as the reference does): a machine class
takes its ``set_trace`` from ``trace_hook(m)``, so an Automat release
without the hook still imports and runs, and only asking for a trace says
that tracing is unavailable.
"""


def _tracing_unavailable(self, tracer):
    raise RuntimeError(
        "this Automat version has no transition tracer (MethodicalMachine._setTrace, "
        "private Automat API), so debug_set_trace/--debug-state cannot work; "
        "install the Automat version this package was tested with")


def trace_hook(machine):
    """``machine._setTrace`` (a descriptor giving each instance its
    ``set_trace(tracer)``), or a stand-in that raises a clear error."""
    try:
        return machine._setTrace
    except AttributeError:
        return _tracing_unavailable
