"""The session's bound on a peer Dilation cannot reach (TransferSession's
``peer_timeout``): Dilation reconnects forever to a peer that was killed;
after ``seconds`` without a connection the session is over."""
from .._status import ConnectedPeer


class PeerWatch:
    """Fed Dilation's status updates; calls ``unreachable(seconds)`` once
    the peer has had no connection for ``seconds``."""

    def __init__(self, reactor, seconds, unreachable):
        self._reactor = reactor
        self._seconds = seconds
        self._unreachable = unreachable
        self._timer = None
        self._stopped = False

    def status(self, status):
        if self._stopped:  # the session is over
            return
        if isinstance(status.peer_connection, ConnectedPeer):
            self._cancel()
        elif self._timer is None:
            self._timer = self._reactor.callLater(self._seconds, self._unreachable,
                                                  self._seconds)

    def stop(self):
        self._stopped = True
        self._cancel()

    def _cancel(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
