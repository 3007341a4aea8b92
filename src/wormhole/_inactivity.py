"""Bounded waits on a peer (docs/security.md, "Timeouts on the receive side").

A peer that stops talking must not keep us waiting forever: every wait
whose end the peer controls (the next message, the next bytes of a
transfer) gives up after a stretch of silence, measured on an injected
``IReactorTime`` so tests drive it with ``task.Clock``.

- ``give_up_after(d, clock, seconds, what)``: ``d``, failing with
  ``PeerTimeout`` when nothing fired it for ``seconds``;
- ``Watchdog(clock, seconds, expired)``: calls ``expired()`` once after
  ``seconds`` without a ``kick()`` (cheap enough to kick per record: a
  kick only notes the time, the timer re-arms itself when it fires).
"""
from .errors import TransferError


class PeerTimeout(TransferError):
    """The peer said nothing for longer than we wait."""


def silence(what, seconds, hint=""):
    """The PeerTimeout for ``seconds`` of silence while waiting for ``what``."""
    return PeerTimeout(f"gave up waiting for {what}: nothing came for {seconds:g} "
                       f"seconds{hint}")


def give_up_after(d, clock, seconds, what, hint=""):
    """Fail ``d`` with ``silence(what, seconds, hint)`` unless it fires
    within ``seconds`` (None: wait as long as it takes). ``d`` is
    cancelled then, so whatever would have fired it later is ignored."""
    if seconds is None:
        return d

    def timed_out(result, timeout):
        raise silence(what, timeout, hint)
    return d.addTimeout(seconds, clock, onTimeoutCancel=timed_out)


class Watchdog:
    def __init__(self, clock, seconds, expired):
        self._clock = clock
        self._seconds = seconds
        self._expired = expired
        self._last = clock.seconds()
        self._timer = None
        if seconds is not None:
            self._timer = clock.callLater(seconds, self._check)

    def kick(self):
        """The peer did something: the silence starts again now."""
        self._last = self._clock.seconds()

    def _check(self):
        idle = self._clock.seconds() - self._last
        if idle >= self._seconds:
            self._timer = None
            self._expired()
        else:
            self._timer = self._clock.callLater(self._seconds - idle, self._check)

    def stop(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
