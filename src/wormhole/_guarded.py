"""Display callbacks that cannot raise into a protocol (docs/transfer-v2.md
"Library API").

The transfer libraries hand counts to the application's display
(``progress(nbytes)``, ``file_started(...)``, a peer's text) from inside
the protocol: under a subchannel's ``dataReceived``, a Transit record, a
streamer's write loop. An exception there would unwind into Dilation or
Transit and drop the connection, for a bar that failed to draw. So the
libraries call such callbacks only through a ``DisplayGuard``: a failing
display is logged once, with its traceback, and the transfer goes on.
"""
from twisted.logger import Logger

_log = Logger()


class DisplayGuard:
    """Calls display callbacks for one transfer (an offer, a classic
    transfer); the first exception any of them raises is logged with its
    traceback (a failure event: a program that has not begun logging,
    like the CLI, shows it on stderr, so the bug gets reported), later
    ones are dropped unlogged: a display that fails once usually fails at
    every chunk."""

    def __init__(self, what):
        self._what = what
        self.failed = False

    def __call__(self, callback, *args):
        try:
            callback(*args)
        except Exception:  # noqa: BLE001 -- a display's error must never end a transfer
            if not self.failed:
                self.failed = True
                _log.failure("a display callback of {what} raised; the transfer goes on and "
                             "its later errors are not logged", what=self._what)

    def wrap(self, callback):
        """``callback`` as a callable that goes through this guard."""
        return lambda *args: self(callback, *args)
