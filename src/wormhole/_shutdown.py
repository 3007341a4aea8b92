"""Work that must happen even when the reactor stops (Ctrl-C) first:
temporary files must not outlive an interrupted transfer."""


class OnShutdown:
    """Run ``f`` if the reactor stops (Ctrl-C) before ``cancel()``:
    temporary files must not outlive an interrupted command."""

    def __init__(self, reactor, f):
        self._reactor = reactor
        self._f = f
        self._fired = False
        self._trigger = reactor.addSystemEventTrigger("before", "shutdown", self._fire)

    def _fire(self):
        self._fired = True
        self._f()

    def cancel(self):
        """The work is done: ``f`` no longer runs at shutdown."""
        if not self._fired:
            self._fired = True
            self._reactor.removeSystemEventTrigger(self._trigger)

