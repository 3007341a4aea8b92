"""The path line's "via" part for transfer-v2: how the data goes, in
classic Transit's words (docs/cli.md: ``Sending (->relay:tcp:HOST:PORT)..``),
from Dilation's status."""
import re

from ... import ConnectedPeer
from ...session import escape_text
from .screen import say


class ConnectionPath:
    """How the data goes, from Dilation's status (``ConnectedPeer``'s
    hint description: ``->tcp:host:port``, ``->relay:...``); says so again
    when Dilation reconnects after losing the connection."""

    # Dilation's name for a connection the peer opened to our listener
    INBOUND = "inbound"

    def __init__(self, cfg):
        self._cfg = cfg
        self.description = "?"
        self._connected = None  # None: never; then whether we are now

    def status_update(self, status):
        connected = isinstance(status.peer_connection, ConnectedPeer)
        if connected:
            # the host names came from the peer's hints
            self.description = escape_text(self._as_classic(
                status.peer_connection.hint_description, status.peer_connection.peer_address))
            if self._connected is False:
                say(self._cfg, f"Reconnected to the peer ({self.description})")
        if self._connected is not None or connected:
            self._connected = connected

    @classmethod
    def _as_classic(cls, hint, peer_address=None):
        """Dilation's description in classic Transit's words: a TCP relay
        is "->relay:tcp:HOST:PORT" there (Dilation leaves out "tcp:"),
        a connection the peer opened to our listener "<-tcp:HOST:PORT"
        (where it came from: our status's ``peer_address``; "<-tcp" when
        unknown)."""
        if hint == cls.INBOUND:
            return f"<-tcp:{peer_address}" if peer_address else "<-tcp"
        relayed = hint.startswith("->relay:")
        if relayed and not re.match(r"->relay:(tcp|tor|wss?):", hint):
            return "->relay:tcp:" + hint[len("->relay:"):]
        return hint
