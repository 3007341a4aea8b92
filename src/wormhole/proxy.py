"""Reaching the Mailbox server and the relays through an HTTP CONNECT or a
SOCKS5 proxy (docs/proxy.md).

``wormhole.create(..., proxy=...)`` takes a proxy URL or a ``Proxy``;
``TransitSender``/``TransitReceiver`` take a ``Proxy`` too. A ``Proxy``
gives each destination an ordinary ``IStreamClientEndpoint``
(``stream_via``, as a Tor manager does): through the proxy, or direct for
a host ``no_proxy`` lists.
"""
from twisted.internet.endpoints import HostnameEndpoint, wrapClientTLS
from twisted.internet.ssl import optionsForClientTLS
from zope.interface import implementer

from ._interfaces import IProxy
from ._proxy._errors import ProxyAuthError, ProxyError, ProxyRefused, ProxyUnreachable
from ._proxy._negotiate import negotiation_for
from ._proxy._tunnel import HANDSHAKE_TIMEOUT, ProxyClientEndpoint
from ._proxy._url import (
    NoProxy,
    ProxyURL,
    ProxyURLError,
    parse_proxy_url,
    proxy_from_environment,
    redact_url,
)

__all__ = ["Proxy", "ProxyURL", "NoProxy", "ProxyError", "ProxyAuthError", "ProxyRefused",
           "ProxyUnreachable", "ProxyURLError", "parse_proxy_url", "proxy_from_environment",
           "redact_url", "from_environment"]

# how long reaching the proxy itself may take: an unreachable proxy is
# one clear line within 10 s (docs/proxy.md, "Errors")
PROXY_CONNECT_TIMEOUT = 8.0


@implementer(IProxy)
class Proxy:
    """``url``: a ProxyURL or its text. ``no_proxy``: a NoProxy (or its
    text) of hosts dialled directly. ``direct``: also dial the peer's
    direct hints, outside the proxy (docs/proxy.md, "Direct hints")."""

    def __init__(self, reactor, url, no_proxy=None, direct=False,
                 connect_timeout=PROXY_CONNECT_TIMEOUT, handshake_timeout=HANDSHAKE_TIMEOUT):
        self._reactor = reactor
        self.url = url if isinstance(url, ProxyURL) else parse_proxy_url(url)
        if no_proxy is None or isinstance(no_proxy, str):
            no_proxy = NoProxy.parse(no_proxy)
        self.no_proxy = no_proxy
        self.direct = bool(direct)
        self._connect_timeout = connect_timeout
        self._handshake_timeout = handshake_timeout

    def __repr__(self):
        return f"<Proxy {self.url}>"

    def routes(self, host):
        """True when a connection to ``host`` goes through the proxy."""
        return not self.no_proxy.matches(host)

    def route_note(self, host):
        return f" (through the proxy {self.url})" if self.routes(host) else ""

    def stream_via(self, host, port, tls=False):
        """An IStreamClientEndpoint to ``host:port``: through the proxy
        (TLS end to end with ``host`` when ``tls``), or direct when
        ``no_proxy`` lists ``host``."""
        if self.routes(host):
            ep = ProxyClientEndpoint(self._reactor, self.url, self._to_proxy(), host, port,
                                     negotiation_for, self._handshake_timeout)
        else:
            ep = HostnameEndpoint(self._reactor, host, port)
        if tls:
            ep = wrapClientTLS(optionsForClientTLS(host), ep)
        return ep

    def _to_proxy(self):
        ep = HostnameEndpoint(self._reactor, self.url.host, self.url.port,
                              timeout=self._connect_timeout)
        if self.url.scheme == "https":
            # CONNECT inside a TLS connection to the proxy itself
            ep = wrapClientTLS(optionsForClientTLS(self.url.host), ep)
        return ep


def from_environment(reactor, environ, direct=False):
    """The ``Proxy`` that ``HTTPS_PROXY``/``ALL_PROXY``/``HTTP_PROXY`` (or
    their lower-case spellings) name, with ``NO_PROXY``; None when no
    proxy is set. ``ProxyURLError`` for a malformed one."""
    url = proxy_from_environment(environ)
    if url is None:
        return None
    return Proxy(reactor, url, NoProxy.from_environment(environ), direct=direct)
