"""Connection hints and abilities as values (spec 004 9.3 "Transit").

On the wire a hint is a dict with a mandatory ``type``:

- ``direct-tcp-v1`` {hostname, port, priority?}
- ``tor-tcp-v1``    {hostname, port, priority?}
- ``relay-v1``      {hints: [{hostname, port, priority?}, ...]}

Hints come from the peer, so parsing never raises on their content: a hint
we cannot use is dropped with a reason (unknown types are expected, spec 9.3
says future versions add more), and the rest still get a try.
"""

import attr

DIRECT_TCP_V1 = "direct-tcp-v1"
TOR_TCP_V1 = "tor-tcp-v1"
RELAY_V1 = "relay-v1"

# docs/security.md "Connection attempts": the reference advertises one
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
    priority = d.get("priority", 0.0)
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        raise BadHint(f"{kind} hint 'priority' must be a number, got {priority!r}")
    try:
        priority = float(priority)
    except OverflowError:
        raise BadHint(f"{kind} hint 'priority' is out of range") from None
    cls = TorTCPV1Hint if kind == TOR_TCP_V1 else DirectTCPV1Hint
    return cls(hostname, port, priority)


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
            # inner hints may omit their type; then they are direct ones
            inner_kind = h.get("type", DIRECT_TCP_V1)
            if inner_kind not in (DIRECT_TCP_V1, TOR_TCP_V1):
                continue
            try:
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
    """The baked-in relay, ``tcp:HOST:PORT`` (spec 004 6.4), -> RelayV1Hint."""
    if not isinstance(s, str):
        raise TypeError(f"transit_relay must be a string like 'tcp:host:port', not {type(s).__name__}")
    parts = s.split(":")
    if len(parts) != 3 or parts[0] != "tcp" or not parts[1]:
        raise ValueError(f"transit_relay must look like 'tcp:host:port', not {s!r}")
    try:
        port = int(parts[2])
    except ValueError:
        raise ValueError(f"transit_relay port must be a number, not {parts[2]!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"transit_relay port must be in 1..65535, not {port}")
    return RelayV1Hint((DirectTCPV1Hint(parts[1], port, 0.0),))


def describe_hint(h):
    """Short human text for logs and ``describe()``."""
    if isinstance(h, RelayV1Hint):
        return "->relay:" + ",".join(describe_hint(i)[2:] for i in h.hints)
    prefix = "->tor:" if isinstance(h, TorTCPV1Hint) else "->tcp:"
    return f"{prefix}{h.hostname}:{h.port}"
