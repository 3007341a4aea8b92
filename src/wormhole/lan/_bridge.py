"""Between the reactor and zeroconf (docs/lan.md, "Inside").

zeroconf runs its own asyncio loop in a thread of its own, and its
blocking calls (probing a name, asking for a service, closing with
goodbyes) must never run on the reactor's thread. Each one runs here in a
daemon thread of its own, and its result reaches the reactor through
``reactor.callFromThread``; the reactor bounds the wait with a timer, so
a stuck call delays nothing but its own Deferred, and a daemon thread
never keeps the process alive.
"""

import threading

from twisted.internet import defer
from twisted.python.failure import Failure

from ._records import LanUnavailable

EXTRA_NEEDED = ("--lan and wormhole.lan need the 'lan' extra (zeroconf and our Mailbox "
                "server): pip install 'wormhole-twisted[lan]'")


def load_zeroconf():
    """The ``zeroconf`` module, or LanUnavailable saying which extra."""
    try:
        import zeroconf
    except ImportError as e:
        raise LanUnavailable(f"{EXTRA_NEEDED} ({e})") from None
    return zeroconf


class ThreadBridge:
    """``run(f, *args)``: ``f(*args)`` in a daemon thread; a Deferred on
    the reactor fires with its result, or with ``defer.TimeoutError``
    after ``timeout`` seconds (the thread is then left to finish alone)."""

    def __init__(self, reactor):
        self._reactor = reactor

    def run(self, timeout, f, *args):
        d = defer.Deferred()

        def deliver(result):
            if d.called:
                return  # timed out already: the late result is dropped
            if timer.active():
                timer.cancel()
            if isinstance(result, Failure):
                d.errback(result)
            else:
                d.callback(result)

        def work():
            try:
                result = f(*args)
            except BaseException:
                result = Failure()
            self._reactor.callFromThread(deliver, result)

        def expired():
            if not d.called:
                d.errback(defer.TimeoutError(f"zeroconf took longer than {timeout} s"))

        timer = self._reactor.callLater(timeout, expired)
        threading.Thread(target=work, name="wormhole-lan", daemon=True).start()
        return d
