"""Merge ``--dump-timing`` bundles and find the phases of a transfer.

The logic of ``misc/dump-timing.py``, kept importable so it can be
tested (``wormhole._timeline._render`` draws it): the ``timing``
parameter of Client API, "Wormhole Parameters", and the
"misc/dump-timing.py is a debug tool ..." paragraph of
Mailbox server protocol, "WebSocket Transport".

A bundle is the JSON list a ``DebugTiming`` writes (ours or the
reference's: the shape is the same).  From each one this module finds:

- who wrote it: the ``role`` (``command`` event, or the reference's
  ``import`` event naming ``cmd_send``/``cmd_receive``) and the wormhole
  ``side`` (``wormhole`` event, or the ``_side`` of any ``ws_send``);
- the messages to and from the Mailbox server, with the server's clock
  where the server stamped them (``server_rx`` of a direct response, the
  ``server_tx`` of the ``ack`` that echoes the command's ``id``);
- the offset of its clock from the server's (the smallest correction that
  keeps every message causal: sent before the server got it, received
  after the server sent it); bundles from one machine need none;
- its phases, each a (name, start, end) in its own clock, in protocol
  order (``PHASES``).
"""
import json
import math
import os
import re

# the protocol's steps, in the order they happen (Mailbox server protocol;
# Client-to-client protocol)
PHASES = ("connect", "allocate/claim", "PAKE", "version",
          "transit connect", "dilation connect", "transfer", "close")

_NUMERIC = re.compile(r"^\d+$")


class TimingError(ValueError):
    """A file that is not a timing bundle: says which and why."""


class Message:
    """One message between a client and the server.

    ``outbound`` is True for client->server.  ``local`` is the client's
    clock; ``server`` the server's (when it arrived there for outbound
    messages, when it left for inbound ones), or None when unknown."""

    def __init__(self, outbound, local, msg, server=None):
        self.outbound = outbound
        self.local = local
        self.msg = msg
        self.server = server

    @property
    def type(self):
        return self.msg.get("type")

    def label(self):
        t = self.type
        if t in ("add", "message") and "phase" in self.msg:
            return f"{t} {self.msg['phase']}"
        return str(t)


class ClientTimeline:
    """What one bundle says about one client."""

    def __init__(self, name, events):
        self.name = name
        self.events = events
        self.role = self._find_role(name, events)
        self.side = self._find_side(events)
        self.messages = self._find_messages(events)
        self.offset = self._find_offset(self.messages)
        self.phases = self._find_phases()
        # the payload size, when the transfer event says (the CLI does)
        ev = self._first_event("transfer")
        size = (ev.get("details") or {}).get("bytes") if ev else None
        self.transfer_bytes = size if isinstance(size, int) and size >= 0 else None

    # -- who ------------------------------------------------------------
    @staticmethod
    def _find_role(name, events):
        for ev in events:
            d = ev.get("details") or {}
            if ev.get("name") == "command" and isinstance(d.get("role"), str) and d["role"]:
                return d["role"]
        for ev in events:
            which = (ev.get("details") or {}).get("which")
            if ev.get("name") == "import" and which in ("cmd_send", "cmd_receive"):
                return "sender" if which == "cmd_send" else "receiver"
        base = os.path.basename(name).lower()
        for role in ("sender", "receiver"):
            if role in base:
                return role
        return None

    @staticmethod
    def _find_side(events):
        for ev in events:
            d = ev.get("details") or {}
            if ev.get("name") == "wormhole" and isinstance(d.get("side"), str):
                return d["side"]
        for ev in events:
            d = ev.get("details") or {}
            if ev.get("name") == "ws_send" and isinstance(d.get("_side"), str):
                return d["_side"]
        return None

    # -- messages ---------------------------------------------------------
    @staticmethod
    def _find_messages(events):
        out = []
        arrival = {}  # id -> server time the command arrived
        for ev in events:
            d = ev.get("details") or {}
            if ev.get("name") == "ws_send":
                msg = {k: v for k, v in d.items() if k != "_side"}
                out.append(Message(True, ev["start"], msg))
            elif ev.get("name") == "ws_receive" and isinstance(d.get("message"), dict):
                msg = d["message"]
                out.append(Message(False, ev["start"], msg, _num(msg.get("server_tx"))))
                # Mailbox server protocol, "WebSocket Transport": the ack and
                # direct responses copy the id;
                # server_rx (responses) or server_tx (ack) is its arrival
                mid = msg.get("id")
                stamp = _num(msg.get("server_rx", msg.get("server_tx")
                                     if msg.get("type") == "ack" else None))
                if isinstance(mid, (str, int)) and stamp is not None:
                    arrival[mid] = min(stamp, arrival.get(mid, stamp))
        for m in out:
            mid = m.msg.get("id")
            if m.outbound and isinstance(mid, (str, int)):
                m.server = arrival.get(mid)
        return out

    @staticmethod
    def _find_offset(messages):
        """Server time = local time + offset."""
        lo, hi = float("-inf"), float("inf")
        for m in messages:
            if not isinstance(m.server, (int, float)):
                continue
            if m.outbound:
                hi = min(hi, m.server - m.local)
            else:
                lo = max(lo, m.server - m.local)
        if lo <= hi:
            return min(max(0.0, lo), hi)
        return (lo + hi) / 2  # inconsistent stamps: split the difference

    # -- phases -----------------------------------------------------------
    def _first_event(self, name):
        for ev in self.events:
            if ev.get("name") == name:
                return ev
        return None

    def _first(self, pred):
        for m in self.messages:
            if pred(m):
                return m.local
        return None

    def _last(self, pred):
        found = None
        for m in self.messages:
            if pred(m):
                found = m.local
        return found

    def _from_peer(self, m, phase=None):
        return (not m.outbound and m.type == "message"
                and m.msg.get("side") != self.side
                and (phase is None or m.msg.get("phase") == phase))

    def _event_span(self, name):
        ev = self._first_event(name)
        if ev is None or ev.get("stop") is None:
            return None, None
        return ev["start"], ev["stop"]

    def _find_phases(self):
        def tx(mtype, phase=None):
            return lambda m: (m.outbound and m.type == mtype
                              and (phase is None or m.msg.get("phase") == phase))

        def rx(mtype):
            return lambda m: not m.outbound and m.type == mtype

        def app(m):  # an application message (numeric phase) either way
            phase = str(m.msg.get("phase", ""))
            return bool(_NUMERIC.match(phase)) and (
                (m.outbound and m.type == "add") or self._from_peer(m))

        # the reference records "command dispatch" just before create()
        begin = (self._first_event("wormhole") or self._first_event("command")
                 or self._first_event("command dispatch"))
        begin = begin["start"] if begin else (self.messages[0].local if self.messages else None)
        got_key = self._event_span("pake2")[1] or self._first(
            lambda m: self._from_peer(m, "pake"))
        got_version = self._first_event("got version")
        got_version = got_version["start"] if got_version else self._first(
            lambda m: self._from_peer(m, "version"))
        spans = {
            "connect": (begin, self._first(rx("welcome"))),
            "allocate/claim": (self._first(lambda m: m.outbound and m.type in
                                           ("allocate", "claim")),
                               self._first(rx("claimed"))),
            "PAKE": (self._first(tx("add", "pake")), got_key),
            "version": (self._first(tx("add", "version")), got_version),
            "transit connect": self._event_span("transit connect"),
            "dilation connect": self._event_span("dilation connect"),
            "transfer": self._event_span("transfer"),
            "close": (self._first(tx("close")), self._first(rx("closed"))),
        }
        if spans["transfer"][0] is None and spans["transit connect"][1] is not None:
            # no CLI record, file mode (File-transfer protocol, "Transit"):
            # the data flows from the Transit connection until the wormhole
            # is closed
            end = spans["close"][0] or max(
                max(ev["start"], ev.get("stop") or 0) for ev in self.events)
            spans["transfer"] = (spans["transit connect"][1], end)
        elif spans["transfer"][0] is None:
            # no CLI record, text mode: the offer and the answer
            # (File-transfer protocol) bound the transfer
            spans["transfer"] = (self._first(app), self._last(app))
        return [(name,) + spans[name] for name in PHASES
                if None not in spans[name]]


def load_bundle(path):
    """Read one ``--dump-timing`` file into a ClientTimeline."""
    try:
        with open(path) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        raise TimingError(f"cannot read timing bundle {path}: {e}") from e
    if not isinstance(events, list):
        raise TimingError(f"{path} is not a --dump-timing bundle "
                          f"(expected a JSON list of events with name and start)")
    for i, ev in enumerate(events):
        problem = _event_problem(ev)
        if problem:
            raise TimingError(f"{path} is not a --dump-timing bundle: event {i} {problem}")
    return ClientTimeline(path, events)


def _event_problem(ev):
    if not isinstance(ev, dict) or not isinstance(ev.get("name"), str):
        return "is not an object with a name"
    if _num(ev.get("start")) is None:
        return f"({ev['name']}) has no start time"
    if ev.get("stop") is not None and _num(ev["stop"]) is None:
        return f"({ev['name']}) has a stop that is not a time"
    if not isinstance(ev.get("details", {}), dict):
        return f"({ev['name']}) has details that are not an object"
    return None


def _num(x):
    """A finite number (JSON allows NaN and Infinity; booleans are not times)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x)


def merge(timelines):
    """Order the clients for drawing: the sender first, the receiver last;
    give nameless ones a name."""
    order = {"sender": 0, None: 1, "receiver": 2}
    out = sorted(timelines, key=lambda c: order.get(c.role, 1))
    for i, c in enumerate(out):
        if c.role is None:
            c.role = f"client {i + 1}"
    return out


def format_size(n):
    """Decimal units, as the CLI prints sizes."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0


def phase_label(client, name, start, end):
    """'transfer 406.0 ms, 50.0 MB at 123.2 MB/s': a phase and its duration,
    with the payload's size and rate for a transfer of known size."""
    text = f"{name} {format_duration(end - start)}"
    if name == "transfer" and client.transfer_bytes is not None:
        text += f", {format_size(client.transfer_bytes)}"
        if end > start:
            text += f" at {format_size(client.transfer_bytes / (end - start))}/s"
    return text


def format_duration(seconds):
    if seconds < 1.0:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"
