"""Which client endpoint reaches a hint, shared by Transit's attempts and
Dilation's connector (File-transfer protocol, "Transit"; Transit protocol,
"Canonical hint encodings"; Tor: docs/tor.md)."""

from twisted.internet.endpoints import HostnameEndpoint

from ._hints import TorTCPV1Hint, WebSocketV1Hint
from ._websocket import client_endpoint as websocket_endpoint


def endpoint_for_hint(reactor, hint, tor=None, tcp_endpoint=HostnameEndpoint, proxy=None):
    """A client endpoint for ``hint``, or None when it cannot be reached
    (a ``tor-tcp-v1`` hint without Tor). With ``tor``, everything goes
    through it; with ``proxy`` (an IProxy, given for relay hints only:
    docs/proxy.md, "Direct hints") so does this hint. A WebSocket relay
    hint gets the WebSocket endpoint."""
    via = tor if tor is not None else proxy
    if isinstance(hint, WebSocketV1Hint):
        return websocket_endpoint(reactor, hint, via)
    if isinstance(hint, TorTCPV1Hint) and tor is None:
        return None
    if via is not None:
        return via.stream_via(hint.hostname, hint.port)
    return tcp_endpoint(reactor, hint.hostname, hint.port)
