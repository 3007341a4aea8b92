"""The path line's "via" part for transfer-v2: how the data goes, in
classic Transit's words (docs/cli.md: ``Sending (->relay:tcp:HOST:PORT)..``),
from Dilation's status (``wormhole.session.PeerPath``)."""
from ...session import PeerPath, escape_text
from .screen import say


class ConnectionPath:
    """How the data goes (``description``: ``->tcp:host:port``,
    ``->relay:...``, escaped: the host names came from the peer's hints);
    says so again when Dilation reconnects after losing the connection."""

    def __init__(self, cfg):
        self._cfg = cfg
        self._path = PeerPath(self._connected)

    @property
    def description(self):
        return "?" if self._path.via is None else escape_text(self._path.via)

    def status_update(self, status):
        self._path.status_update(status)

    def _connected(self, via, again):
        if again:
            say(self._cfg, f"Reconnected to the peer ({self.description})")
