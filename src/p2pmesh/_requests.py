"""Our requests awaiting the peer's answer (P2P-D5.2, 6.7).

A peer answers requests in the order it was asked, so the waiting requests
are a FIFO and an answer belongs to the oldest. One timer, on the injected
clock, watches the oldest: when it expires the FIFO can no longer be
matched up, and the link must close. Nothing here sends or closes; the
connection does, when told.
"""

from twisted.internet import defer

from ._config import FIND_NODE, FIND_VALUE


class RequestFailed(Exception):
    """The peer answered NACK: args = (the NACK list,)."""


class RequestTimeout(Exception):
    """No answer within the request timeout (P2P-D6.7): the link closed."""


class ConnectionGone(Exception):
    """The link closed before the answer arrived."""


class PendingRequests:
    """``timed_out()`` is called once the oldest request has waited
    ``timeout`` seconds and was failed with RequestTimeout."""

    def __init__(self, clock, timeout, timed_out):
        self._clock = clock
        self._timeout = timeout
        self._timed_out = timed_out
        self._queue = []      # [(opcode, Deferred, deadline)], oldest first
        self._timer = None    # one timer, for the oldest

    def __bool__(self):
        return bool(self._queue)

    def add(self, opcode):
        """A request was sent: a Deferred of its ACK list."""
        d = defer.Deferred()
        self._queue.append((opcode, d, self._clock.seconds() + self._timeout))
        self._arm()
        return d

    def matches(self, answered):
        """Whether an answer for the opcode ``answered`` fits the oldest
        request (FIND_VALUE may be answered with nodes)."""
        opcode = self._queue[0][0]
        return answered == opcode or (opcode == FIND_VALUE and answered == FIND_NODE)

    def answer(self, acked, value):
        """The oldest request's answer: an ACK fires its Deferred with
        ``value``, a NACK fails it with RequestFailed."""
        _, d, _ = self._queue.pop(0)
        self._arm()
        if acked:
            d.callback(value)
        else:
            d.errback(RequestFailed(value))

    def fail_all(self):
        """The link is gone: every waiting request fails, ConnectionGone."""
        queue, self._queue = self._queue, []
        self._arm()
        for _, d, _ in queue:
            d.errback(ConnectionGone())

    def _arm(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        if self._queue:
            delay = max(0.0, self._queue[0][2] - self._clock.seconds())
            self._timer = self._clock.callLater(delay, self._expired)

    def _expired(self):
        # P2P-D6.7: the FIFO cannot resync; the link closes, and whatever
        # else waits fails with it (fail_all), so no timer is re-armed
        self._timer = None
        opcode, d, _ = self._queue.pop(0)
        d.errback(RequestTimeout(opcode))
        self._timed_out()
