"""What can go wrong on the way through a proxy. Every text names the
proxy by its redacted URL (``ProxyURL.__str__``): never its password."""
from ..errors import WormholeError


class ProxyError(WormholeError):
    """The proxy could not give us a tunnel."""


class ProxyUnreachable(ProxyError):
    """Nothing answered at the proxy's address."""


class ProxyAuthError(ProxyError):
    """The proxy refused our credentials, or wants some we did not give
    (HTTP 407, a SOCKS5 authentication failure)."""


class ProxyRefused(ProxyError):
    """The proxy answered but would not (or could not) reach the target."""
