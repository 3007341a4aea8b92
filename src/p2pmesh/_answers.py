"""Our answers to the peer's requests, sent in the order the requests came
(P2P-D5.2) however late each one is ready: each request takes a slot when
it arrives, and a filled slot is sent once every slot before it is.

The slots are bounded (``max_pending_answers``): a peer that keeps asking
while its answers wait is flooding, and ``overflow`` is told.
"""

from twisted.internet import defer
from twisted.python import log

from ._config import CUSTOM, NACK


class OrderedAnswers:
    """``send(opcode, value)`` sends one answer; ``overflow(why)`` is
    called when a request arrives with all slots taken."""

    def __init__(self, send, max_pending, overflow):
        self._send = send
        self._max_pending = max_pending
        self._overflow = overflow
        self._slots = []      # [[ready, (opcode, value)]], in arrival order

    def slot(self):
        """The place of the request that just arrived."""
        if len(self._slots) >= self._max_pending:
            self._overflow("too many requests awaiting their answer")
        slot = [False, None]
        self._slots.append(slot)
        return slot

    def fill(self, slot, opcode, value):
        """``slot``'s answer is ready: send it and every ready one after
        it, once no earlier answer is still waiting."""
        slot[0], slot[1] = True, (opcode, value)
        while self._slots and self._slots[0][0]:
            _, (op, val) = self._slots.pop(0)
            self._send(op, val)

    def answer_later(self, result):
        """Fill a fresh slot from ``result``: an (opcode, value) tuple, or
        a Deferred of one (a handler that fails answers NACK)."""
        slot = self.slot()
        if isinstance(result, defer.Deferred):
            def failed(f):
                log.err(f, "p2pmesh: request handler failed")
                return (NACK, [CUSTOM, "failed"])
            result.addErrback(failed)
            result.addCallback(lambda answer: self.fill(slot, *answer))
        else:
            self.fill(slot, *result)
