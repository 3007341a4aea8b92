"""The WebSocket glue and the pure helpers of the RendezvousConnector.

The relay URL check (Client API, "Mailbox Servers": ``ws://`` or ``wss://``), the choice of
permission method from the welcome (Mailbox server protocol, "Permission to Use the
Server"), and autobahn's client protocol, which only forwards events to the
RendezvousConnector machine.
"""

from urllib.parse import urlparse

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet.abstract import isIPAddress, isIPv6Address
from twisted.internet.endpoints import (
    HostnameEndpoint,
    TCP4ClientEndpoint,
    TCP6ClientEndpoint,
    wrapClientTLS,
)
from twisted.internet.ssl import optionsForClientTLS

from .errors import RelayURLError, WelcomeError

# 2**28 SHA-1 hashes is minutes of CPU; a server asking for more is not
# one we can satisfy (and may be hostile): refuse clearly instead
MAX_HASHCASH_BITS = 28


def parse_relay_url(url):
    """Return (scheme, host, port) of a ``ws://``/``wss://`` URL, or raise
    RelayURLError saying what is wrong (Client API, "Mailbox Servers")."""
    if not isinstance(url, str):
        raise RelayURLError(f"relay URL must be a str, not {type(url).__name__}")
    p = urlparse(url)
    if p.scheme not in ("ws", "wss"):
        raise RelayURLError(
            f"relay URL {url!r} must start with ws:// or wss:// "
            f"(the Mailbox server speaks WebSocket)")
    if not p.hostname:
        raise RelayURLError(f"relay URL {url!r} has no host")
    try:
        port = p.port
    except ValueError as e:
        raise RelayURLError(f"relay URL {url!r} has a bad port: {e}") from None
    if port is None:
        port = 443 if p.scheme == "wss" else 80
    return p.scheme, p.hostname, port


def server_endpoint(reactor, scheme, host, port, bind=None):
    """The client endpoint of a connection to the Mailbox server at
    ``scheme://host:port`` (from ``parse_relay_url``), from the local
    address ``bind`` if given; TLS for ``wss``.

    A host name goes through HostnameEndpoint, which resolves it and
    tries its addresses in turn. An address is dialled as it is:
    HostnameEndpoint would also "resolve" it, on a thread of the reactor's
    pool started for that, and report a refused connection only when its
    next attempt would have started, 0.3 s later (Twisted's attempt
    delay), with no other address to try: that was 0.3 s of the 0.8 s a
    ``wormhole receive`` took to say that nothing listens on
    127.0.0.1:PORT (docs/performance.md, "Session 8: the fixed part")."""
    if isIPAddress(host):
        ep = TCP4ClientEndpoint(reactor, host, port, bindAddress=bind)
    elif isIPv6Address(host):
        ep = TCP6ClientEndpoint(reactor, host, port, bindAddress=bind)
    else:
        ep = HostnameEndpoint(reactor, host, port, bindAddress=bind)
    if scheme == "wss":
        ep = wrapClientTLS(optionsForClientTLS(host), ep)
    return ep


def choose_permission(welcome):
    """What the server wants before ``bind``: None (nothing), or the
    ``(resource, bits)`` of a hashcash challenge.

    Mailbox server protocol, "Permission to Use the Server": ``none`` if offered, else
    ``hashcash``; raises WelcomeError if no method we know is offered.
    """
    methods = welcome.get("permission-required")
    if methods is None:
        return None
    if not isinstance(methods, dict):
        raise WelcomeError(f"server sent a malformed permission-required: {methods!r}")
    if "none" in methods:
        return None
    if "hashcash" in methods:
        params = methods["hashcash"]
        if not isinstance(params, dict):
            raise WelcomeError(f"server sent malformed hashcash parameters: {params!r}")
        bits, resource = params.get("bits"), params.get("resource")
        if (not isinstance(bits, int) or isinstance(bits, bool)
                or not isinstance(resource, str)):
            raise WelcomeError(f"server sent malformed hashcash parameters: {params!r}")
        if not 0 <= bits <= MAX_HASHCASH_BITS:
            raise WelcomeError(
                f"the server asks for a {bits}-bit hashcash stamp; this client mints "
                f"at most {MAX_HASHCASH_BITS} bits")
        return (resource, bits)
    raise WelcomeError(
        "the server requires a permission method this client does not support "
        f"(offered: {', '.join(sorted(methods)) or 'none at all'}); "
        "upgrading the client may help")


class WSClient(WebSocketClientProtocol):
    def onOpen(self):
        self.factory.rc.ws_open(self)

    def onMessage(self, payload, isBinary):
        self.factory.rc.ws_message(payload)

    def onClose(self, wasClean, code, reason):
        self.factory.rc.ws_close(wasClean, code, reason)


class WSFactory(WebSocketClientFactory):
    protocol = WSClient

    def __init__(self, rc, *args, **kwargs):
        WebSocketClientFactory.__init__(self, *args, **kwargs)
        self.rc = rc
