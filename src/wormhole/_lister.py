"""The Lister machine: fetch the list of nameplates for code completion.

Mailbox server protocol, "Nameplates": ``list`` answers ``nameplates`` (a server may always
answer with an empty list). A refresh asked for while disconnected is sent
when the connection comes back.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import offline


@implementer(_interfaces.ILister)
class Lister:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, timing):
        self._timing = timing

    _OFFLINE = {"S0B_idle_connected": "S0A_idle_disconnected",
                "S1B_wanting_connected": "S1A_wanting_disconnected"}

    @m.serializer()
    def serialize(self, state):
        return {"state": offline(state, self._OFFLINE)}

    @m.unserializer()
    def _restore(self, record):
        return record["state"]

    def wire(self, rendezvous_connector, input):
        self._RC = _interfaces.IRendezvousConnector(rendezvous_connector)
        self._I = _interfaces.IInput(input)

    @m.state(initial=True, serialized="S0A_idle_disconnected")
    def S0A_idle_disconnected(self): pass  # noqa

    @m.state(serialized="S0B_idle_connected")
    def S0B_idle_connected(self): pass  # noqa

    @m.state(serialized="S1A_wanting_disconnected")
    def S1A_wanting_disconnected(self): pass  # noqa

    @m.state(serialized="S1B_wanting_connected")
    def S1B_wanting_connected(self): pass  # noqa

    @m.input()
    def connected(self): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def refresh(self): pass  # noqa

    @m.input()
    def rx_nameplates(self, all_nameplates): pass  # noqa

    @m.output()
    def tx_list(self):
        self._RC.tx_list()

    @m.output()
    def deliver(self, all_nameplates):
        self._I.got_nameplates(all_nameplates)

    S0A_idle_disconnected.upon(connected, enter=S0B_idle_connected, outputs=[])
    S0A_idle_disconnected.upon(refresh, enter=S1A_wanting_disconnected, outputs=[])
    S0B_idle_connected.upon(lost, enter=S0A_idle_disconnected, outputs=[])
    S0B_idle_connected.upon(refresh, enter=S1B_wanting_connected, outputs=[tx_list])
    S0B_idle_connected.upon(rx_nameplates, enter=S0B_idle_connected, outputs=[deliver])
    S1A_wanting_disconnected.upon(connected, enter=S1B_wanting_connected, outputs=[tx_list])
    S1A_wanting_disconnected.upon(refresh, enter=S1A_wanting_disconnected, outputs=[])
    S1B_wanting_connected.upon(lost, enter=S1A_wanting_disconnected, outputs=[])
    S1B_wanting_connected.upon(refresh, enter=S1B_wanting_connected, outputs=[tx_list])
    S1B_wanting_connected.upon(rx_nameplates, enter=S0B_idle_connected, outputs=[deliver])
