"""A command stopped on purpose: SIGINT (Ctrl-C) or SIGTERM
(docs/cli.md "Ctrl-C and SIGTERM").

The reactor's own handlers stop it on either signal; ``Interruption``
notes which one came first, so that the command can tell the peer why it
goes (``reason``: the spec's ``error`` message, File-transfer protocol,
"Sender") and exit with 128 plus the signal's number (``status``), as
shells report a command the signal ended: a transfer that was
interrupted did not happen, and never exits 0. ``CancelOnStop`` hands
the reason to a classic transfer whose bytes are moving, which tells its
peer over Transit (the mailbox is closed by then:
``wormhole.transfer._cancel``).
"""
import signal

from ..transfer import CANCELLED

_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


class Interruption:
    """The signal that stopped the command, if one did: made with the
    command's ``Config`` (``cfg.interruption``), installed when its
    reactor runs."""

    def __init__(self):
        self.signum = None

    def install(self):
        """Wrap the handlers the reactor installed (call once it runs)."""
        for signum in _NAMES:
            previous = signal.getsignal(signum)
            if callable(previous):
                signal.signal(signum, self._handler(previous))

    def _handler(self, previous):
        def handler(signum, frame):
            if self.signum is None:
                self.signum = signum
            previous(signum, frame)
        return handler

    @property
    def reason(self):
        """What the peer is told: it says "cancelled" (docs/cli.md)."""
        return f"{CANCELLED} ({_NAMES.get(self.signum, 'interrupted')})"

    @property
    def status(self):
        """The exit status: 128 + the signal (130 for Ctrl-C), or None."""
        return None if self.signum is None else 128 + self.signum


class CancelOnStop:
    """While a classic transfer runs: when the reactor stops (a signal),
    ``cancellation.cancel(interruption.reason)`` (a
    ``transfer.Cancellation``), and the reactor waits for it (bounded by
    the library) before it drops the connections. ``remove()`` once the
    transfer is over."""

    def __init__(self, reactor, cancellation, interruption):
        self._reactor = reactor
        self._cancellation = cancellation
        self._interruption = interruption
        self._trigger = reactor.addSystemEventTrigger("before", "shutdown", self._stop)

    def _stop(self):
        self._trigger = None
        return self._cancellation.cancel(self._interruption.reason)

    def remove(self):
        if self._trigger is not None:
            self._reactor.removeSystemEventTrigger(self._trigger)
            self._trigger = None
