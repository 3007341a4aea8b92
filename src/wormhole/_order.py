"""The Order machine: the ``pake`` phase first, everything else after the key.

The server keeps no order (Mailbox server protocol, "Mailboxes"), and after a reconnection
the peer's ``version`` or an application phase can arrive before its
``pake``. Key agreement needs the ``pake`` body and our code; only once the
key exists can the other phases be decrypted, so they wait here.

What waits is bounded (docs/security.md, "Mailbox client"): an
honest peer adds its ``pake`` before anything else, so at most a handful
of its messages can overtake it; a server (or peer) that sends more than
``max_queued`` messages or ``max_queued_bytes`` of bodies before the
``pake`` gets OrderOverflow, which the RendezvousConnector reports as a
ProtocolError, instead of our memory.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import bytes_or_none, hex_or_none

MAX_QUEUED = 1000
MAX_QUEUED_BYTES = 32 * 1024 * 1024


class OrderOverflow(ValueError):
    """Too much arrived before the peer's ``pake``."""


@implementer(_interfaces.IOrder)
class Order:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, max_queued=MAX_QUEUED, max_queued_bytes=MAX_QUEUED_BYTES):
        self._queue = []
        self._queued_bytes = 0
        self._max_queued = max_queued
        self._max_queued_bytes = max_queued_bytes

    @m.serializer()
    def serialize(self, state):
        return {"state": state,
                "queue": [[side, phase, hex_or_none(body)] for side, phase, body in self._queue]}

    @m.unserializer()
    def _restore(self, record):
        self._queue = [(side, phase, bytes_or_none(body)) for side, phase, body in record["queue"]]
        self._queued_bytes = sum(len(body) for _, _, body in self._queue)
        return record["state"]

    def wire(self, key, receive):
        self._K = _interfaces.IKey(key)
        self._R = _interfaces.IReceive(receive)

    @m.state(initial=True, serialized="S0_no_key")
    def S0_no_key(self): pass  # noqa

    @m.state(serialized="S1_has_key")
    def S1_has_key(self): pass  # noqa

    def got_message(self, side, phase, body):
        if phase == "pake":
            self._got_pake(side, phase, body)
        else:
            self._check_room(body)
            self._got_non_pake(side, phase, body)

    def _check_room(self, body):
        # only S0_no_key queues: in S1_has_key the queue is empty, and no
        # single body reaches the byte limit (RendezvousConnector's 32 MiB
        # per message is hex, twice the body)
        if (len(self._queue) >= self._max_queued
                or self._queued_bytes + len(body) > self._max_queued_bytes):
            raise OrderOverflow(
                f"{len(self._queue) + 1} messages ({self._queued_bytes + len(body)} bytes) "
                f"arrived before the peer's pake; the limit is {self._max_queued} messages, "
                f"{self._max_queued_bytes} bytes (docs/security.md)")

    @m.input()
    def _got_pake(self, side, phase, body): pass  # noqa

    @m.input()
    def _got_non_pake(self, side, phase, body): pass  # noqa

    @m.input()
    def got_key(self): pass  # noqa

    @m.output()
    def deliver_pake(self, side, phase, body):
        self._K.got_pake(body)

    @m.output()
    def queue(self, side, phase, body):
        self._queue.append((side, phase, body))
        self._queued_bytes += len(body)

    @m.output()
    def deliver_queued(self):
        queued, self._queue = self._queue, []
        self._queued_bytes = 0
        for side, phase, body in queued:
            self._R.got_message(side, phase, body)

    @m.output()
    def deliver(self, side, phase, body):
        self._R.got_message(side, phase, body)

    S0_no_key.upon(_got_pake, enter=S0_no_key, outputs=[deliver_pake])
    S0_no_key.upon(_got_non_pake, enter=S0_no_key, outputs=[queue])
    S0_no_key.upon(got_key, enter=S1_has_key, outputs=[deliver_queued])
    S1_has_key.upon(_got_pake, enter=S1_has_key, outputs=[])
    S1_has_key.upon(_got_non_pake, enter=S1_has_key, outputs=[deliver])
