"""Everything that reaches into Automat's private internals, in one place,
for the one Automat range it was checked with.

Three things need more than Automat's public API:

- ``trace_hook(m)``: ``MethodicalMachine._setTrace``, the transition
  tracer behind ``debug_set_trace`` and ``--debug-state`` (as the
  reference has it);
- ``index_transitions(m)`` (the offer machines and, per record too, the
  Dilation machines) and ``bind_inputs(obj, names)``: a dict
  lookup of a machine's transitions (Automat scans its
  ``_automaton._transitions`` list, comparing states with generated
  ``__eq__``) and inputs looked up once per instance (Automat's input
  descriptor builds a wrapper at every access, and is a non-data
  descriptor, so an instance attribute wins). transfer-v2's offer
  machines are fed once per 64 KiB record, where the scan was a third of
  the receiver's CPU (docs/performance.md, "The default path against the
  reference");
- ``state_name(state)``: the name of the method behind a state
  (``MethodicalState.method``), which the Dilation machines' per-state
  rows are keyed by (``_dilation._state_paths``); ``refused(error)``:
  which input a ``NoTransition`` refused, in which state (the
  RendezvousConnector names a server message that came out of turn).

A different Automat may rename any of these or change what they mean, and
the speed-ups would then be slower or wrong without a word. So this module
refuses to import with any Automat outside ``AUTOMAT_CHECKED``, with one
message saying which version it found and which it needs; ``pyproject.toml``
pins the same range. To move to a new Automat: read these functions
against its source, run ``tests/transfer_v2/test_machine_index.py`` and
the unit tests, then widen the range here and in pyproject.toml together.
"""

import os

# the Automat releases these functions were checked against: at least
# CHECKED_LOW, below CHECKED_BELOW (the same range as pyproject.toml)
CHECKED_LOW = (25, 4, 16)
CHECKED_BELOW = (25, 5)
AUTOMAT_CHECKED = ">=25.4.16,<25.5"


class AutomatVersionError(ImportError):
    """The installed Automat is not one these internals were checked with."""


def _release(text):
    """``"25.4.16"`` -> ``(25, 4, 16)``; the numeric release only."""
    parts = []
    for part in text.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if digits != part:
            break
    return tuple(parts)


def check_automat(found):
    """Raise AutomatVersionError unless Automat ``found`` (a version
    string, or None when none is installed) is in the checked range."""
    if found is not None:
        release = _release(found)
        if release and CHECKED_LOW <= release < CHECKED_BELOW:
            return
    shown = "no installed Automat" if found is None else f"Automat {found}"
    raise AutomatVersionError(
        f"wormhole needs automat{AUTOMAT_CHECKED} (it uses Automat internals checked "
        f"with those releases only), but found {shown}: "
        f"pip install 'automat{AUTOMAT_CHECKED}'")


def _installed_automat():
    """The installed Automat's version, or None. Its ``.dist-info`` beside
    the package is read first: ``importlib.metadata`` costs tens of ms of
    every command's start (docs/performance.md, "Session 8: the fixed
    part"), so it is only the fallback for other kinds of install."""
    import automat
    where = os.path.dirname(os.path.dirname(os.path.abspath(automat.__file__)))
    for name in os.listdir(where):
        if name.lower().startswith("automat-") and name.endswith(".dist-info"):
            return name[len("automat-"):-len(".dist-info")]
    from importlib import metadata
    try:
        return metadata.version("automat")
    except metadata.PackageNotFoundError:
        return None


check_automat(_installed_automat())


# -- the transition tracer ----------------------------------------------------
def trace_hook(machine):
    """``machine._setTrace``: a descriptor giving each instance its
    ``set_trace(tracer)``; a machine class takes its ``set_trace`` from here."""
    return machine._setTrace


# -- constant-time inputs -----------------------------------------------------
def index_transitions(machine):
    """Give the ``MethodicalMachine`` ``machine`` a dict lookup of its
    transitions, with the same answers as Automat's scan; a pair without a
    transition still goes to Automat's own lookup, so its ``NoTransition``
    is unchanged. The dict is built at the first input, when every class
    body has declared its transitions (``StatePaths`` calls this while its
    machine's ``upon``s are still being declared); from then on the lookup
    is the dict's alone."""
    automaton = machine._automaton
    scan = automaton.outputForInput

    def first_input(in_state, symbol):
        # keyed by identity: states and inputs are the class's own objects,
        # and hashing a state would call its generated __hash__ every time
        table = {(id(state), id(sym)): (new, tuple(outputs))
                 for state, sym, new, outputs in automaton.allTransitions()}

        def output_for_input(in_state, symbol):
            found = table.get((id(in_state), id(symbol)))
            if found is None:
                return scan(in_state, symbol)
            return found[0], list(found[1])

        automaton.outputForInput = output_for_input
        return output_for_input(in_state, symbol)

    automaton.outputForInput = first_input


def bind_inputs(obj, names):
    """Look each input in ``names`` up once on ``obj`` and keep it there."""
    for name in names:
        setattr(obj, name, getattr(obj, name))


# -- state names -----------------------------------------------------------------
def state_name(state):
    """The name of the method a ``MethodicalState`` was made from."""
    return state.method.__name__


def refused(error):
    """``(input, state)`` a ``NoTransition`` refused, by name: e.g.
    ``("Nameplate.rx_claimed", "S0B")``."""
    return error.symbol.method.__qualname__, error.state.method.__name__
