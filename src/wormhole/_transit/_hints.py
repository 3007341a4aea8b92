"""Connection hints and abilities as values (File-transfer protocol,
"Transit"; Transit protocol, "Canonical hint encodings").

On the wire a hint is a dict with a mandatory ``type``:

- ``direct-tcp-v1`` {hostname, port, priority?}
- ``tor-tcp-v1``    {hostname, port, priority?}
- ``relay-v1``      {name?, hints: [inner, ...]}, each inner hint a
  ``direct-tcp-v1`` or ``tor-tcp-v1`` one, or ``websocket-v1`` {url, priority?}
  (``ws://`` or ``wss://``): one relay server reachable several ways.

Hints come from the peer, so parsing never raises on their content: a hint
we cannot use is dropped with a reason (unknown types are expected: the
File-transfer protocol, "Transit", says future versions add more), and the
rest still get a try.
"""

from urllib.parse import urlsplit

import attr

DIRECT_TCP_V1 = "direct-tcp-v1"
TOR_TCP_V1 = "tor-tcp-v1"
RELAY_V1 = "relay-v1"
WEBSOCKET_V1 = "websocket-v1"

# docs/security.md, "Connection attempts": the reference advertises one
# direct hint per local interface address plus its relay; a few dozen is
# already a lot, so 100 leaves room for any real host and bounds a flood
MAX_HINTS_PER_PEER = 100


@attr.s(frozen=True)
class DirectTCPV1Hint:
    hostname = attr.ib()
    port = attr.ib()
    priority = attr.ib(default=0.0)

    def to_dict(self):
        # the reference writes the type into relay-v1's inner hints too
        return {"type": DIRECT_TCP_V1, "priority": self.priority,
                "hostname": self.hostname, "port": self.port}


@attr.s(frozen=True)
class TorTCPV1Hint:
    hostname = attr.ib()
    port = attr.ib()
    priority = attr.ib(default=0.0)

    def to_dict(self):
        return {"type": TOR_TCP_V1, "priority": self.priority,
                "hostname": self.hostname, "port": self.port}


@attr.s(frozen=True)
class WebSocketV1Hint:
    """A relay's WebSocket URL; only ever inside a relay-v1 hint."""
    url = attr.ib()
    priority = attr.ib(default=0.0)

    @property
    def tls(self):
        return self.url.startswith("wss:")

    @property
    def hostname(self):
        return urlsplit(self.url).hostname

    @property
    def port(self):
        return urlsplit(self.url).port or (443 if self.tls else 80)

    def to_dict(self):
        return {"type": WEBSOCKET_V1, "priority": self.priority, "url": self.url}


@attr.s(frozen=True)
class RelayV1Hint:
    hints = attr.ib()  # tuple of DirectTCPV1Hint / TorTCPV1Hint

    def to_dict(self):
        return {"type": RELAY_V1, "hints": [h.to_dict() for h in self.hints]}


class BadHint(ValueError):
    """One hint dict could not be used; the message says why."""


def _parse_endpoint(d, kind):
    hostname = d.get("hostname")
    if not isinstance(hostname, str) or not hostname:
        raise BadHint(f"{kind} hint needs a non-empty string 'hostname', got {hostname!r}")
    if not hostname.isprintable() or any(c.isspace() for c in hostname):
        raise BadHint(f"{kind} hint hostname {hostname!r} is not a host name or address")
    port = d.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise BadHint(f"{kind} hint needs an integer 'port' in 1..65535, got {port!r}")
    priority = _parse_priority(d, kind)
    cls = TorTCPV1Hint if kind == TOR_TCP_V1 else DirectTCPV1Hint
    return cls(hostname, port, priority)


def _parse_priority(d, kind):
    priority = d.get("priority", 0.0)
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        raise BadHint(f"{kind} hint 'priority' must be a number, got {priority!r}")
    try:
        return float(priority)
    except OverflowError:
        raise BadHint(f"{kind} hint 'priority' is out of range") from None


def check_websocket_url(url):
    """A ws:// or wss:// URL with a host (and a valid port) -> the URL;
    raises ValueError saying what is wrong."""
    if not isinstance(url, str) or not url.isprintable() or any(c.isspace() for c in url):
        raise ValueError(f"a WebSocket URL must be a printable string without spaces, not {url!r}")
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"a WebSocket URL must start with ws:// or wss://, not {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"the port of {url!r} is not a number in 0..65535") from None
    if not parts.hostname or port == 0:
        raise ValueError(f"{url!r} needs a host (and a port in 1..65535, if any)")
    return url


def _parse_websocket(d):
    try:
        url = check_websocket_url(d.get("url"))
    except ValueError as e:
        raise BadHint(f"websocket-v1 hint: {e}") from None
    return WebSocketV1Hint(url, _parse_priority(d, WEBSOCKET_V1))


def parse_hint(d):
    """One hint dict -> a hint value; raises BadHint (also for unknown types)."""
    if not isinstance(d, dict):
        raise BadHint(f"a hint must be an object, not {type(d).__name__}")
    kind = d.get("type")
    if kind in (DIRECT_TCP_V1, TOR_TCP_V1):
        return _parse_endpoint(d, kind)
    if kind == RELAY_V1:
        inner = d.get("hints")
        if not isinstance(inner, list):
            raise BadHint(f"relay-v1 hint needs a list 'hints', got {inner!r}")
        parsed = []
        for h in inner:
            if not isinstance(h, dict):
                continue
            # inner hints may omit their type; then they are direct ones.
            # Inner hints of unknown type "must be ignored"
            # (Transit protocol, "Canonical hint encodings")
            inner_kind = h.get("type", DIRECT_TCP_V1)
            try:
                if inner_kind == WEBSOCKET_V1:
                    parsed.append(_parse_websocket(h))
                elif inner_kind in (DIRECT_TCP_V1, TOR_TCP_V1):
                    parsed.append(_parse_endpoint(h, inner_kind))
            except BadHint:
                continue
            if len(parsed) >= MAX_HINTS_PER_PEER:
                break  # the budget cuts it further; never parse a flood
        if not parsed:
            raise BadHint("relay-v1 hint has no usable inner hint")
        return RelayV1Hint(tuple(parsed))
    raise BadHint(f"unknown hint type {kind!r}")


def hint_count(h):
    """How many addresses a hint names: what the per-peer bound counts."""
    return len(h.hints) if isinstance(h, RelayV1Hint) else 1


class HintBudget:
    """The bound on hints accepted from one peer (docs/security.md,
    "Connection attempts"): each address a peer names costs one, and once
    ``limit`` are spent the rest are dropped with one reason.

    One budget serves every hint message of one Transit or one Dilation
    generation, so splitting a flood into many messages does not help.
    """

    def __init__(self, limit=MAX_HINTS_PER_PEER):
        self.limit = limit
        self.spent = 0

    def parse(self, hints):
        """A list of hint dicts -> (usable hints, [reasons for the dropped ones])."""
        if not isinstance(hints, list):
            raise TypeError(f"hints must be a list, not {type(hints).__name__}")
        good, dropped = [], []
        for i, d in enumerate(hints):
            if self.spent >= self.limit:
                dropped.append(f"{len(hints) - i} more hint(s) ignored: a peer may name "
                               f"at most {self.limit} addresses")
                break
            try:
                h = parse_hint(d)
            except BadHint as e:
                dropped.append(str(e))
                continue
            room = self.limit - self.spent
            if isinstance(h, RelayV1Hint) and len(h.hints) > room:
                dropped.append(f"relay-v1 hint cut to {room} of its {len(h.hints)} "
                               f"addresses: a peer may name at most {self.limit}")
                h = RelayV1Hint(h.hints[:room])
            self.spent += hint_count(h)
            good.append(h)
        return good, dropped


def parse_hints(hints, limit=MAX_HINTS_PER_PEER):
    """A list of hint dicts -> (usable hints, [reasons for the dropped ones]),
    at most ``limit`` addresses (see HintBudget)."""
    return HintBudget(limit).parse(hints)


def parse_relay_string(s):
    """One relay location -> RelayV1Hint: ``tcp:HOST:PORT`` (Transit
    protocol, "Relay"), or a ``ws://`` / ``wss://`` URL (Transit protocol,
    "WebSockets Transport")."""
    if not isinstance(s, str):
        raise TypeError(f"transit_relay must be a string like 'tcp:host:port' or "
                        f"'ws://host:port/', not {type(s).__name__}")
    if s.startswith(("ws:", "wss:")):
        return RelayV1Hint((WebSocketV1Hint(check_websocket_url(s), 0.0),))
    parts = s.split(":")
    if len(parts) != 3 or parts[0] != "tcp" or not parts[1]:
        raise ValueError(f"transit_relay must look like 'tcp:host:port' or "
                         f"'ws://host:port/', not {s!r}")
    try:
        port = int(parts[2])
    except ValueError:
        raise ValueError(f"transit_relay port must be a number, not {parts[2]!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"transit_relay port must be in 1..65535, not {port}")
    return RelayV1Hint((DirectTCPV1Hint(parts[1], port, 0.0),))


def parse_relay_locations(locations):
    """Our relays: one location, several separated by commas, or a list of
    them -> [RelayV1Hint, ...]. Each location becomes its own relay-v1 hint:
    we cannot know that two locations are the same server, and the text
    says to advertise distinct servers as distinct hints."""
    if isinstance(locations, str):
        locations = [part.strip() for part in locations.split(",") if part.strip()]
    elif not isinstance(locations, (list, tuple)):
        raise TypeError(f"transit relays must be a string or a list of strings, "
                        f"not {type(locations).__name__}")
    relays = []
    for location in locations:
        relay = parse_relay_string(location)
        if relay not in relays:
            relays.append(relay)
    return relays


def describe_hint(h):
    """Short human text for logs and ``describe()``."""
    if isinstance(h, RelayV1Hint):
        return "->relay:" + ",".join(describe_hint(i)[2:] for i in h.hints)
    if isinstance(h, WebSocketV1Hint):
        return "->" + h.url
    prefix = "->tor:" if isinstance(h, TorTCPV1Hint) else "->tcp:"
    return f"{prefix}{h.hostname}:{h.port}"
