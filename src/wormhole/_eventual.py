"""Run callbacks in a later reactor turn.

Deferred-mode events reach the application eventually, never from inside
a machine's transition: a callback that calls back into the wormhole then
sees a settled machine. One turn runs the calls queued before it; what
they queue runs in the next turn, and a call that raises is logged
without stopping the others (the reference 0.24's EventualQueue, whose
public name is ``wormhole.eventual.EventualQueue``).
"""

from twisted.internet.defer import Deferred
from twisted.logger import Logger

log = Logger()


class EventualQueue:
    def __init__(self, clock):
        self._clock = clock
        self._calls = []
        self._timer = None
        self._flush_waiters = []

    def eventually(self, f, *args, **kwargs):
        self._calls.append((f, args, kwargs))
        self._schedule()

    def fire_eventually(self, value=None):
        d = Deferred()
        self.eventually(d.callback, value)
        return d

    def _schedule(self):
        if not self._timer:
            self._timer = self._clock.callLater(0, self._turn)

    def _turn(self):
        self._timer = None
        calls, self._calls = self._calls, []
        for f, args, kwargs in calls:
            try:
                f(*args, **kwargs)
            except Exception:  # noqa: BLE001 -- one failing call must not stop the rest
                log.failure("an eventually-queued call raised")
        if self._calls:
            self._schedule()
        else:
            waiters, self._flush_waiters = self._flush_waiters, []
            for d in waiters:
                d.callback(None)

    def flush(self):
        """A Deferred firing once everything queued (and whatever that
        queues) has run (the reference 0.24's ``flush``)."""
        d = Deferred()
        self._flush_waiters.append(d)
        self._schedule()
        return d

    def flush_sync(self):
        """Tests only: run everything queued now, turn after turn,
        including what the queued calls add."""
        while self._calls or self._flush_waiters:
            if self._timer:
                self._timer.cancel()
                self._timer = None
            self._turn()
