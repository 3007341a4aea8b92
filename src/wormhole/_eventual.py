"""Run callbacks in a later reactor turn.

Events reach the application eventually, never from inside a machine's
transition: a delegate or Deferred callback that calls back into the
wormhole then sees a settled machine.
"""

from twisted.internet.defer import Deferred


class EventualQueue:
    def __init__(self, clock):
        self._clock = clock
        self._calls = []
        self._timer = None
        self._flush_waiters = []

    def eventually(self, f, *args, **kwargs):
        self._calls.append((f, args, kwargs))
        if not self._timer:
            self._timer = self._clock.callLater(0, self._turn)

    def fire_eventually(self, value=None):
        d = Deferred()
        self.eventually(d.callback, value)
        return d

    def _turn(self):
        while self._calls:
            f, args, kwargs = self._calls.pop(0)
            f(*args, **kwargs)
        self._timer = None
        waiters, self._flush_waiters = self._flush_waiters, []
        for d in waiters:
            d.callback(None)

    def flush(self):
        """A Deferred firing once everything queued (and whatever that
        queues) has run (the reference 0.24's ``flush``)."""
        d = Deferred()
        self._flush_waiters.append(d)
        if not self._timer:
            self._timer = self._clock.callLater(0, self._turn)
        return d

    def flush_sync(self):
        """Tests only: run everything queued now, including what the
        queued calls add."""
        while self._calls:
            if self._timer:
                self._timer.cancel()
                self._timer = None
            self._turn()
