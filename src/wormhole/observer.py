"""``wormhole.observer``: the observers the reference 0.24 exports
publicly. ``OneShotObserver`` and ``SequenceObserver`` are this library's
own (in _observer, behind every ``get_*`` Deferred); ``EmptyableSet`` is
a set whose ``when_next_empty()`` fires the next time it is emptied.
"""

from twisted.internet.defer import Deferred

from ._observer import NoResult, OneShotObserver, SequenceObserver

__all__ = ["EmptyableSet", "NoResult", "OneShotObserver", "SequenceObserver"]


class EmptyableSet(set):
    """A set that tells waiters when it becomes empty: ``when_next_empty()``
    fires (in a later turn, through the eventual queue) the next time a
    ``discard()`` leaves it empty, even when it is empty already (as the
    reference 0.24: "the next time", never at once)."""

    def __init__(self, *args, **kwargs):
        # ``_eventual_queue=``: fire in a later turn (else at once)
        self._eq = kwargs.pop("_eventual_queue", None)
        super().__init__(*args, **kwargs)
        self._waiting = []

    def when_next_empty(self):
        d = Deferred()
        self._waiting.append(d)
        return d

    def discard(self, o):
        super().discard(o)
        if not self and self._waiting:
            waiting, self._waiting = self._waiting, []
            for d in waiting:
                self._fire(d)

    def _fire(self, d):
        if self._eq is not None:
            self._eq.eventually(d.callback, None)
        else:
            d.callback(None)
