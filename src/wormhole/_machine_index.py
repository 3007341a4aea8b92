"""Constant-time inputs for Automat machines on a hot path, reached the
guarded way (as ``_tracing`` reaches the tracer).

Automat (25.4) finds a transition by scanning every transition of the
machine and comparing ``(state, input)`` pairs, each comparison a call of
the states' generated ``__eq__``; and every ``self.some_input`` builds a
new wrapper function (``functools.wraps`` and a code copy). For a machine
fed one input per record (transfer-v2's offer machines: every 64 KiB of
file data, and several per file of a folder) that was a third of the
receiver's CPU in a 2,000-file folder (docs/performance.md, "The default
path against the reference").

``index_transitions(m)`` gives the machine's automaton a dict from
``(state, input)`` to the same answer the scan gives; a pair without a
transition still goes to Automat's own lookup, so its ``NoTransition``
(or unhandled transition) is unchanged. ``bind_inputs(obj, names)`` looks
the named inputs up once per instance, so later calls skip the wrapper's
construction (Automat's input descriptor is a non-data descriptor: the
instance attribute wins). Both only change how fast an answer is found,
never which: the machine, its states, outputs and tracer are Automat's.
With an Automat whose private ``_automaton``/``_transitions`` are not
there, ``index_transitions`` leaves the machine as it is.
"""


def index_transitions(machine):
    """Give the ``MethodicalMachine`` ``machine`` (after its last
    ``upon``) a dict lookup of its transitions; True when it did."""
    automaton = getattr(machine, "_automaton", None)
    transitions = getattr(automaton, "_transitions", None)
    scan = getattr(automaton, "outputForInput", None)
    if transitions is None or scan is None:
        return False
    # keyed by identity: states and inputs are the class's own objects,
    # and hashing a state would call its generated __hash__ every time
    table = {(id(state), id(symbol)): (new, tuple(outputs))
             for state, symbol, new, outputs in transitions}

    def output_for_input(in_state, symbol):
        found = table.get((id(in_state), id(symbol)))
        if found is None:
            return scan(in_state, symbol)
        return found[0], list(found[1])

    automaton.outputForInput = output_for_input
    return True


def bind_inputs(obj, names):
    """Look each input in ``names`` up once on ``obj`` and keep it there."""
    for name in names:
        setattr(obj, name, getattr(obj, name))
