"""Which client endpoint reaches a hint, shared by Transit's attempts and
Dilation's connector (File-transfer protocol, "Transit"; Transit protocol,
"Canonical hint encodings"; Tor: docs/tor.md)."""

from twisted.internet.endpoints import HostnameEndpoint

from ._hints import TorTCPV1Hint, WebSocketV1Hint
from ._websocket import client_endpoint as websocket_endpoint


def endpoint_for_hint(reactor, hint, tor=None, tcp_endpoint=HostnameEndpoint):
    """A client endpoint for ``hint``, or None when it cannot be reached
    (a ``tor-tcp-v1`` hint without Tor). With ``tor``, everything goes
    through it; a WebSocket relay hint gets the WebSocket endpoint."""
    if isinstance(hint, WebSocketV1Hint):
        return websocket_endpoint(reactor, hint, tor)
    if tor is not None:
        return tor.stream_via(hint.hostname, hint.port)
    if isinstance(hint, TorTCPV1Hint):
        return None
    return tcp_endpoint(reactor, hint.hostname, hint.port)
