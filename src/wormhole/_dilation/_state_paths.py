"""Per-state hot paths for the Dilation machines (docs/performance.md,
"Where the time went, and what changed").

An Automat input costs a transition lookup and a call per output; for
every DATA record that is more than the record's own work. So the
machines hand per-record work to plain attributes (``_on_record``,
``_on_write``, ``_send_now``, ...) holding the behaviour of the current
state. Those attributes are written in one place only: ``StatePaths``
gives each state a row of values and puts, first in every transition, an
output that sets the row of the state entered. The attributes are thus a
function of the state, never a second truth beside it
(docs/architecture.md, "No flag duplicates a machine's state").

First, not last: an output may call back into the machine (a protocol's
dataReceived writing or closing, a resend filling the transport), and the
innermost transition, which runs later, must leave its own row in place.
A value is read when the row is installed, so a row refers to objects
other outputs set (the attached protocol, the receiver) through methods
that look them up per call.

Automat finds a transition by scanning every transition of the machine,
comparing states field by field: ~4 us an input for the Outbound's
thirty. These machines look it up in a dictionary built from the same
transitions at the first input, for the inputs that still come often (an
application pausing and resuming its subchannel's reading, the transport
pausing a resend); anything the table lacks goes to Automat's scan, which
raises NoTransition as before (docs/performance.md, "Dilation").
"""

from .._automat_private import index_transitions, state_name


class StatePaths:
    """``rows``: ``{state name: {attribute: f(instance) -> value}}``, one
    row per state of ``machine``'s class, all rows naming the same
    attributes."""

    def __init__(self, machine, rows):
        names = {frozenset(row) for row in rows.values()}
        if len(names) != 1:
            raise ValueError(f"every state's row must set the same attributes: {names}")
        self.rows = rows
        self._outputs = {state: self._output_for(machine, state, row)
                         for state, row in rows.items()}
        # the class body declares its transitions after this runs
        index_transitions(machine)

    @staticmethod
    def _output_for(machine, state, row):
        items = tuple(row.items())

        def install(self):
            for name, value_of in items:
                setattr(self, name, value_of(self))
        install.__name__ = f"paths_of_{state}"
        return machine.output()(install)

    def upon(self, state, input, enter, outputs):
        """``state.upon(input, enter=enter, outputs=...)`` with ``enter``'s
        row installed first."""
        state.upon(input, enter=enter,
                   outputs=[self._outputs[state_name(enter)]] + list(outputs))

    def install_initial(self, instance, state_name):
        """Set the initial state's row (from ``__init__``)."""
        for name, value_of in self.rows[state_name].items():
            setattr(instance, name, value_of(instance))

