"""What a LAN Mailbox announces by multicast DNS, and how a receiver
reads what it heard (docs/lan.md, "What crosses the network"). Values in,
values out: no socket, no thread, no zeroconf.

One announcement is a DNS-SD service (RFC 6763) of type ``_wormhole._tcp``
whose instance name is the nameplate (``7._wormhole._tcp.local.``): its
SRV record names the host and port of the sender's Mailbox server, its
TXT record the Mailbox protocol's version and URL path, so that the URL
is ``ws://ADDRESS:PORT/v1`` (Client API, "Mailbox Servers").
"""

import ipaddress

from ..errors import TransferError

SERVICE_TYPE = "_wormhole._tcp.local."
# the TXT record: "txtvers" is DNS-SD's own version key (RFC 6763, 6.7);
# "protovers" the Mailbox protocol's, "path" where its WebSocket lives
TXT = {"txtvers": "1", "protovers": "1", "path": "/v1"}
# seconds every record of ours lives in a listener's cache: RFC 6762's
# value for host records, used for all of them so that a sender that died
# without a goodbye misleads nobody for longer (docs/lan.md, "How it works")
TTL = 120
# a nameplate of ours is digits, at most this many (a probe each)
MAX_NAMEPLATE_DIGITS = 4


class LanError(TransferError):
    """Finding or announcing a sender on the local network failed."""


class LanUnavailable(LanError):
    """The ``lan`` extra (zeroconf, our Mailbox server) is not installed."""


class NoSenderFound(LanError):
    """No sender on this network announces the nameplate."""


class AmbiguousNameplate(LanError):
    """Two different senders announce one nameplate: we refuse to guess
    (docs/security.md, "On a local network")."""


class NameplateTaken(LanError):
    """Another sender on this network already announces the nameplate
    we asked for (or every one we tried)."""


def instance_name(nameplate):
    """The service name that carries ``nameplate``."""
    if not is_nameplate(nameplate):
        raise ValueError(f"a LAN nameplate is 1 to {MAX_NAMEPLATE_DIGITS} digits, "
                         f"not {nameplate!r}")
    return f"{nameplate}.{SERVICE_TYPE}"


def is_nameplate(text):
    return (isinstance(text, str) and 0 < len(text) <= MAX_NAMEPLATE_DIGITS
            and text.isascii() and text.isdigit() and not text.startswith("0"))


def nameplate_of(service_name):
    """The nameplate an announcement's name carries, or None when it is
    not one of ours."""
    if not service_name.lower().endswith("." + SERVICE_TYPE):
        return None
    head = service_name[:-len(SERVICE_TYPE) - 1]
    return head if is_nameplate(head) else None


def mailbox_url(address, port, path="/v1"):
    host = f"[{address}]" if ":" in address else address
    return f"ws://{host}:{port}{path}"


class Announcement:
    """What one responder said about a nameplate: SRV (host, port), the
    host's addresses (A records) and the TXT properties (str -> str)."""

    def __init__(self, server, port, addresses, properties):
        self.server = server.lower()
        self.port = port
        self.addresses = tuple(sorted(set(addresses)))
        self.properties = dict(properties)

    def key(self):
        return (self.server, self.port)

    def __repr__(self):
        return f"Announcement({self.server!r}, {self.port}, {self.addresses})"


def _shown(name, limit=64):
    """A host name from the network, safe to print: printable ASCII only
    (anything else is "?"), at most ``limit`` characters."""
    text = "".join(c if c.isascii() and c.isprintable() else "?" for c in name[:limit])
    return text + ("..." if len(name) > limit else "")


def usable_address(address):
    """An address a LAN peer may be reached on: IPv4, not loopback,
    multicast or unspecified; link-local and private ranges are the LAN."""
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_multicast or ip.is_unspecified)


def choose(nameplate, announcements):
    """The Mailbox URL of the one sender announcing ``nameplate``.

    No announcement: NoSenderFound. Two responders that disagree on the
    server (a different SRV host or port): AmbiguousNameplate, since
    either may be a forgery and guessing would let one hijack the session
    (PAKE keeps the content safe: the failure is only a denial of
    service, docs/security.md). An announcement with another protocol
    version or no usable address is not a sender of ours."""
    ours = [a for a in announcements
            if a.properties.get("protovers") == TXT["protovers"]
            and a.properties.get("path", "").startswith("/")
            and any(usable_address(x) for x in a.addresses) and 0 < a.port < 65536]
    distinct = {a.key(): a for a in ours}
    if not distinct:
        raise NoSenderFound(
            f"no sender on this network offers nameplate {nameplate} (nothing answered "
            f"for {nameplate}.{SERVICE_TYPE.rstrip('.')}): check the code, and that the "
            "sender runs 'wormhole send --lan' on the same network")
    if len(distinct) > 1:
        where = ", ".join(sorted(f"{_shown(a.server)}:{a.port}" for a in distinct.values()))
        raise AmbiguousNameplate(
            f"two different senders announce nameplate {nameplate} on this network "
            f"({where}): refusing to guess which is real. Ask the sender for the "
            "--relay-url line it printed and use that instead of --lan")
    (one,) = distinct.values()
    address = next(x for x in one.addresses if usable_address(x))
    return mailbox_url(address, one.port, one.properties["path"])


def parse_txt(data):
    """A TXT record's bytes (RFC 6763, 6.1: length-prefixed strings of
    ``key=value``) as {str: str}; a malformed record gives what was read
    before the damage, a key without "=" the value ""."""
    props = {}
    i = 0
    while i < len(data):
        n = data[i]
        chunk = data[i + 1:i + 1 + n]
        if len(chunk) < n:
            break
        i += 1 + n
        key, _, value = chunk.partition(b"=")
        if key:
            props.setdefault(key.decode("ascii", "replace").lower(),
                             value.decode("utf-8", "replace"))
    return props
