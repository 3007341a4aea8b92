"""Observers turning one-shot and repeated events into Deferreds.

Each ``when_*`` call gets its own Deferred, whether it is made before or
after the event (spec 004 5.9: each ``get_*`` may be called many times).
"""

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure


# the reference 0.24's sentinel for "not fired yet" (wormhole.observer)
NoResult = object()


class OneShotObserver:
    def __init__(self, eventual_queue):
        self._eq = eventual_queue
        self._result = None
        self._fired = False
        self._observers = []

    def when_fired(self):
        d = Deferred()
        if self._fired:
            self._eq.eventually(d.callback, self._result)
        else:
            self._observers.append(d)
        return d

    def fire(self, result):
        assert not self._fired
        self._fired = True
        self._result = result
        for d in self._observers:
            self._eq.eventually(d.callback, result)
        self._observers = []

    def error(self, f):
        """Fire with a failure: every waiting and later Deferred errbacks."""
        self.fire(f if isinstance(f, Failure) else Failure(f))

    def fire_if_not_fired(self, result):
        if not self._fired:
            self.fire(result)


class SequenceObserver:
    """Delivers events in order, one per ``when_next_event()`` call; once an
    error is fired, every waiting and later call gets that error.
    ``taken(result)`` is called as each result is handed to a Deferred."""

    def __init__(self, eventual_queue, taken=None):
        self._eq = eventual_queue
        self._taken = taken or (lambda result: None)
        self._error = None
        self._results = []
        self._observers = []

    def when_next_event(self):
        d = Deferred()
        if self._results:
            result = self._results.pop(0)
            self._taken(result)
            self._eq.eventually(d.callback, result)
        elif self._error is not None:
            self._eq.eventually(d.errback, self._error)
        else:
            self._observers.append(d)
        return d

    def fire(self, result):
        if isinstance(result, Failure):
            self._error = result
            for d in self._observers:
                self._eq.eventually(d.errback, result)
            self._observers = []
        elif self._observers:
            self._taken(result)
            self._eq.eventually(self._observers.pop(0).callback, result)
        else:
            self._results.append(result)
