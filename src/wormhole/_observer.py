"""Observers turning one-shot and repeated events into Deferreds.

Each ``when_*`` call gets its own Deferred, whether it is made before or
after the event (Client API, "Events": each ``get_*`` may be called many times),
and it fires in a later turn, through the eventual queue. An error ends
an observer for good: every later call gets it, whatever came before
(the wormhole closed, so its welcome or its unread messages are no
longer handed out: the reference 0.24's behaviour, docs/api.md).
"""

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

# the reference 0.24's sentinel for "not fired yet" (wormhole.observer)
NoResult = object()


def _as_failure(f):
    return f if isinstance(f, Failure) else Failure(f)


class OneShotObserver:
    def __init__(self, eventual_queue):
        self._eq = eventual_queue
        self._result = NoResult
        self._observers = []

    def when_fired(self):
        d = Deferred()
        if self._result is NoResult:
            self._observers.append(d)
        else:
            self._eq.eventually(d.callback, self._result)
        return d

    def fire(self, result):
        assert self._result is NoResult, "a OneShotObserver fires once"
        self._settle(result)

    def error(self, f):
        """Fire with a failure (an exception is wrapped), also after
        ``fire()``: the failure replaces the result for every waiting and
        later ``when_fired()``."""
        self._settle(_as_failure(f))

    def fire_if_not_fired(self, result):
        if self._result is NoResult:
            self._settle(result)

    def error_if_not_fired(self, f):
        """``error()``, unless the event already happened: what has
        happened stays true (a word list known before the close)."""
        if self._result is NoResult:
            self._settle(_as_failure(f))

    def _settle(self, result):
        self._result = result
        waiting, self._observers = self._observers, []
        for d in waiting:
            self._eq.eventually(d.callback, result)


class SequenceObserver:
    """Delivers events in order, one per ``when_next_event()`` call; once an
    error is fired, every waiting and later call gets that error, also
    when results were still waiting to be taken. ``taken(result)`` is
    called as each result is handed to a Deferred."""

    def __init__(self, eventual_queue, taken=None):
        self._eq = eventual_queue
        self._taken = taken or (lambda result: None)
        self._error = None
        self._results = []
        self._observers = []

    def when_next_event(self):
        d = Deferred()
        if self._error is not None:
            self._eq.eventually(d.errback, self._error)
        elif self._results:
            result = self._results.pop(0)
            self._taken(result)
            self._eq.eventually(d.callback, result)
        else:
            self._observers.append(d)
        return d

    def fire(self, result):
        if isinstance(result, Failure):
            self._error = result
            waiting, self._observers = self._observers, []
            for d in waiting:
                self._eq.eventually(d.errback, result)
        elif self._observers:
            self._taken(result)
            self._eq.eventually(self._observers.pop(0).callback, result)
        else:
            self._results.append(result)
