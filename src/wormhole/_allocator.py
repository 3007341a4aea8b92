"""The Allocator machine: ask the server for a nameplate, pick the words.

Mailbox server protocol, "Nameplates": ``allocate`` returns the shortest free nameplate
(already claimed for us). An allocation still pending when the connection
drops is asked for again after reconnecting.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import offline
from ._wordlist import PGPWordList


@implementer(_interfaces.IAllocator)
class Allocator:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, timing):
        self._timing = timing
        self._length = None
        self._wordlist = None

    _OFFLINE = {"S0B_idle_connected": "S0A_idle",
                "S1B_allocating_connected": "S1A_allocating"}

    @m.serializer()
    def serialize(self, state):
        return {"state": offline(state, self._OFFLINE), "length": self._length}

    @m.unserializer()
    def _restore(self, record):
        self._length = record["length"]
        # every code uses the PGP word list today (Client API, "Code
        # Management"), so a
        # checkpoint names none
        self._wordlist = PGPWordList() if self._length is not None else None
        return record["state"]

    def wire(self, rendezvous_connector, code):
        self._RC = _interfaces.IRendezvousConnector(rendezvous_connector)
        self._C = _interfaces.ICode(code)

    @m.state(initial=True, serialized="S0A_idle")
    def S0A_idle(self): pass  # noqa

    @m.state(serialized="S0B_idle_connected")
    def S0B_idle_connected(self): pass  # noqa

    @m.state(serialized="S1A_allocating")
    def S1A_allocating(self): pass  # noqa

    @m.state(serialized="S1B_allocating_connected")
    def S1B_allocating_connected(self): pass  # noqa

    @m.state(serialized="S2_done")
    def S2_done(self): pass  # noqa

    @m.input()
    def connected(self): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def allocate(self, length, wordlist): pass  # noqa

    @m.input()
    def rx_allocated(self, nameplate): pass  # noqa

    @m.output()
    def record(self, length, wordlist):
        self._length = length
        self._wordlist = wordlist

    @m.output()
    def tx_allocate(self):
        self._RC.tx_allocate()

    @m.output()
    def build_code(self, nameplate):
        words = self._wordlist.choose_words(self._length)
        self._C.allocated(nameplate, f"{nameplate}-{words}")

    S0A_idle.upon(connected, enter=S0B_idle_connected, outputs=[])
    S0A_idle.upon(allocate, enter=S1A_allocating, outputs=[record])
    S0B_idle_connected.upon(lost, enter=S0A_idle, outputs=[])
    S0B_idle_connected.upon(allocate, enter=S1B_allocating_connected, outputs=[record, tx_allocate])
    S0B_idle_connected.upon(rx_allocated, enter=S0B_idle_connected, outputs=[])
    S1A_allocating.upon(connected, enter=S1B_allocating_connected, outputs=[tx_allocate])
    S1B_allocating_connected.upon(lost, enter=S1A_allocating, outputs=[])
    S1B_allocating_connected.upon(rx_allocated, enter=S2_done, outputs=[build_code])
    S2_done.upon(connected, enter=S2_done, outputs=[])
    S2_done.upon(lost, enter=S2_done, outputs=[])
    S2_done.upon(rx_allocated, enter=S2_done, outputs=[])
