"""Proxy URLs: parsing, redaction, the environment's choice and NO_PROXY
(docs/proxy.md, "Which proxy", "NO_PROXY", "Credentials").

Pure functions and values: no I/O, no reactor. A ``ProxyURL`` never shows
its password: ``str()``, ``repr()`` and ``redacted`` all hide it, so an
error message, a log line or the ``--dump-timing`` bundle built from one
cannot leak it.
"""
import ipaddress
from urllib.parse import unquote, urlsplit

import attrs

SCHEMES = {"http": 8080, "https": 443, "socks5": 1080, "socks5h": 1080}
# the variables a proxy is taken from, in the order they are tried; the
# lower-case spelling first, as curl and wget read them
ENVIRONMENT = ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
               "http_proxy", "HTTP_PROXY")
NO_PROXY_ENVIRONMENT = ("no_proxy", "NO_PROXY")
HIDDEN = "***"


class ProxyURLError(ValueError):
    """A proxy URL that cannot be used; the text never holds a password."""


@attrs.frozen(repr=False)
class ProxyURL:
    scheme: str            # http, https, socks5 or socks5h
    host: str
    port: int
    username: str = None
    password: str = attrs.field(default=None, eq=False)

    @property
    def redacted(self):
        """The URL with the password replaced by ``***`` (the user name
        stays: it tells which account without giving it away)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = ""
        if self.username is not None:
            user = self.username + (f":{HIDDEN}" if self.password is not None else "") + "@"
        return f"{self.scheme}://{user}{host}:{self.port}"

    @property
    def is_socks(self):
        return self.scheme.startswith("socks5")

    def with_password(self, password):
        return attrs.evolve(self, password=password)

    def __str__(self):
        return self.redacted

    __repr__ = __str__


def parse_proxy_url(text):
    """A ``ProxyURL`` from ``http://``, ``https://``, ``socks5://`` or
    ``socks5h://`` ``[user[:password]@]host[:port]``; a bare ``host:port``
    is taken as ``http://``, as curl does. ``ProxyURLError`` otherwise,
    whose text shows the URL redacted."""
    if not isinstance(text, str) or not text.strip():
        raise ProxyURLError("empty proxy URL")
    text = text.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as e:
        raise ProxyURLError(f"bad proxy URL {redact_url(text)}: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ProxyURLError(
            f"bad proxy URL {redact_url(text)}: the scheme must be one of "
            f"{', '.join(s + '://' for s in SCHEMES)}")
    if not parts.hostname:
        raise ProxyURLError(f"bad proxy URL {redact_url(text)}: no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProxyURLError(f"bad proxy URL {redact_url(text)}: a proxy URL has no path")
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    if scheme.startswith("socks5") and (
            len((username or "").encode()) > 255 or len((password or "").encode()) > 255):
        # RFC 1929: one length byte each
        raise ProxyURLError(f"bad proxy URL {redact_url(text)}: a SOCKS5 user name "
                            "and password are at most 255 bytes each")
    return ProxyURL(scheme, parts.hostname, port or SCHEMES[scheme], username, password)


def redact_url(text):
    """``text`` (any URL-ish string) with the password of its
    ``user:password@`` part replaced by ``***``; for strings that are not
    ProxyURLs (what a user typed, an error's text)."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    authority, slash, tail = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return text
    user = userinfo.split(":", 1)[0]
    return f"{scheme}{sep}{user}:{HIDDEN}@{hostport}{slash}{tail}"


def proxy_from_environment(environ):
    """The ``ProxyURL`` the environment names (the first of ENVIRONMENT
    that is set and not empty), or None. A wormhole opens long-lived TCP
    streams only (Mailbox WebSocket, relays), so one proxy carries them
    all: docs/proxy.md, "Which proxy"."""
    for name in ENVIRONMENT:
        value = environ.get(name, "").strip()
        if value:
            try:
                return parse_proxy_url(value)
            except ProxyURLError as e:
                raise ProxyURLError(f"${name}: {e}") from None
    return None


@attrs.frozen
class NoProxy:
    """The hosts dialled directly even though a proxy is set: ``NO_PROXY``
    entries, comma (or space) separated: ``*`` (every host), a host name
    (itself and every name under it; a leading dot or ``*.`` means the
    same), an IP address, or a CIDR block. An entry's ``:port`` is ignored
    (as wget does: the host decides)."""
    everything: bool = False
    names: tuple = ()
    networks: tuple = ()

    @classmethod
    def parse(cls, text):
        names, networks, everything = [], [], False
        for entry in (text or "").replace(" ", ",").split(","):
            entry = entry.strip().lower()
            if not entry:
                continue
            if entry == "*":
                everything = True
                continue
            network = _network(entry)
            if network is not None:
                networks.append(network)
                continue
            host = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
            host = host.lstrip("*").lstrip(".").rstrip(".")
            if host:
                names.append(host)
        return cls(everything, tuple(names), tuple(networks))

    @classmethod
    def from_environment(cls, environ):
        for name in NO_PROXY_ENVIRONMENT:
            if environ.get(name, "").strip():
                return cls.parse(environ[name])
        return cls()

    def matches(self, host):
        """True when ``host`` (a name or an address literal) is to be
        dialled directly."""
        if self.everything:
            return True
        host = host.strip("[]").lower().rstrip(".")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = None
        if address is not None:
            if any(address in n for n in self.networks):
                return True
            return host in self.names
        return any(host == n or host.endswith("." + n) for n in self.names)

    def __bool__(self):
        return self.everything or bool(self.names) or bool(self.networks)


def _network(entry):
    """An ip_network for an address or CIDR entry (``[::1]``, ``[fd00::]/8``
    too), else None."""
    candidate = entry
    if candidate.startswith("["):
        address, _, rest = candidate[1:].partition("]")
        candidate = address + rest if rest.startswith("/") else address
    elif candidate.count(":") == 1:  # 10.0.0.1:8080
        candidate = candidate.split(":", 1)[0]
    try:
        return ipaddress.ip_network(candidate, strict=False)
    except ValueError:
        return None
