"""How a transfer-v2 session's bytes go, from Dilation's status, in
classic Transit's words (docs/cli.md: ``Sending (->relay:tcp:HOST:PORT)..``):
the ``Connected`` event's ``via`` (docs/api.md "Sessions"), and the CLI's
path line."""
import re

from .._status import ConnectedPeer

# Dilation's name for a connection the peer opened to our listener
INBOUND = "inbound"


def as_classic(hint, peer_address=None):
    """Dilation's description of a connection in classic Transit's words:
    a TCP relay is "->relay:tcp:HOST:PORT" there (Dilation leaves out
    "tcp:"), a connection the peer opened to our listener
    "<-tcp:HOST:PORT" (where it came from: the status's ``peer_address``;
    "<-tcp" when unknown). The host names came from the peer's hints:
    escape them before showing them."""
    if hint == INBOUND:
        return f"<-tcp:{peer_address}" if peer_address else "<-tcp"
    relayed = hint.startswith("->relay:")
    if relayed and not re.match(r"->relay:(tcp|tor|wss?):", hint):
        return "->relay:tcp:" + hint[len("->relay:"):]
    return hint


class PeerPath:
    """Follows Dilation's status (``status_update``): ``connected(via,
    again)`` is called each time a connection to the peer is up, ``again``
    when one was up before (Dilation reconnected)."""

    def __init__(self, connected):
        self._connected = connected
        self.via = None    # the last connection's description
        self._up = None    # None: never connected; then whether we are now

    def status_update(self, status):
        up = isinstance(status.peer_connection, ConnectedPeer)
        if up:
            peer = status.peer_connection
            self.via = as_classic(peer.hint_description, peer.peer_address)
            if not self._up:
                self._connected(self.via, self._up is False)
        if self._up is not None or up:
            self._up = up
