# -*- test-case-name: tests.relay.test_plugin -*-
"""``twistd transitrelay``: the reference relay's options, plus ours.

Every option of magic-wormhole-transit-relay 0.5 keeps its name, short
form and meaning (``--port``, ``--websocket``, ``--websocket-url``,
``--log-fd``, ``--blur-usage``, ``--usage-db``); the limits are ours.
docs/relay.md lists them all.
"""

from urllib.parse import urlparse

from twisted.application import strports
from twisted.application.service import MultiService, Service
from twisted.python import usage

from wormhole_ops.listen import with_backlog
from wormhole_ops.logs import log_startup
from wormhole_ops.metrics import metrics_service
from wormhole_ops.usage import SchemaError

from ._limits import Limits
from .server import build_relay, make_tcp_factory, make_websocket_factory

LONGDESC = """\
This plugin sets up a 'Transit Relay' server for magic-wormhole. It
listens for TCP (and, with --websocket, WebSocket) connections, pairs the
two that present the same handshake token, and relays bytes between them.
"""


def _timeout(value):
    """Seconds; 0 or 'none' turns the timeout off."""
    if value.lower() in ("0", "none", "off"):
        return None
    seconds = float(value)
    if seconds < 0:
        raise ValueError("a timeout cannot be negative")
    return seconds


def _positive_int(value):
    n = int(value)
    if n < 1:
        raise ValueError("must be at least 1")
    return n


_defaults = Limits()

# (option, Limits field, converter, help)
_LIMIT_OPTIONS = [
    ("max-handshake-length", "max_handshake_length", _positive_int,
     "longest handshake line accepted, in bytes"),
    ("handshake-timeout", "handshake_timeout", _timeout,
     "seconds a client may take to send its handshake (0: no limit)"),
    ("pairing-timeout", "pairing_timeout", _timeout,
     "seconds a handshake waits for its partner (0: no limit)"),
    ("idle-timeout", "idle_timeout", _timeout,
     "seconds a pair may stay silent both ways (0, default: no limit)"),
    ("close-timeout", "close_timeout", _timeout,
     "seconds a closed connection may take to flush before it is dropped"),
    ("max-waiting-per-token", "max_waiting_per_token", _positive_int,
     "connections that may wait on one token at once"),
]


class Options(usage.Options):
    synopsis = "[--port=] [--log-fd] [--blur-usage=] [--usage-db=]"
    longdesc = LONGDESC

    optFlags = [
        ("log-addresses", None,
         "name clients' IP addresses in log lines (off: never logged)"),
        ("no-splice", None,
         "copy every byte through Python, never splice(2) (Linux TCP pairs "
         "splice by default)"),
    ]

    optParameters = [
        ("port", "p", r"tcp:4001:interface=\:\:", "endpoint to listen on"),
        ("websocket", "w", None,
         "endpoint to listen for WebSocket connections"),
        ("websocket-url", "u", None,
         "WebSocket URL (derived from endpoint if not provided)"),
        ("blur-usage", None, None,
         "blur timestamps and data sizes in logs (seconds)", int),
        ("log-fd", None, None,
         "write JSON usage logs to this file descriptor", int),
        ("usage-db", None, None, "record usage data (SQLite)"),
        # JSON-lines usage events for wormhole_analytics (docs/usage-events.md)
        ("usage-events", None, None,
         "write usage events (daily JSON-lines files) into this folder"),
        ("server-id", None, None,
         "this relay's name in usage events [default: the host name]"),
        ("metrics", None, None,
         "serve /metrics (Prometheus) and /health on this endpoint, e.g. "
         "tcp:9101:interface=127.0.0.1 (off by default)"),
    ] + [(name, None, None, f"{text} [default: "
          f"{getattr(_defaults, field) or 0}]")
         for name, field, _, text in _LIMIT_OPTIONS]

    def postOptions(self):
        limits = {}
        for name, field, conv, _ in _LIMIT_OPTIONS:
            if self[name] is None:
                continue
            try:
                limits[field] = conv(self[name])
            except ValueError as e:
                raise usage.UsageError(f"--{name}: {self[name]!r}: {e}") from e
        self["limits"] = Limits(**limits)
        if self["blur-usage"] is not None and self["blur-usage"] < 1:
            raise usage.UsageError("--blur-usage wants a number of seconds "
                                   "(at least 1)")


def _websocket_url(endpoint):
    """ws://localhost:PORT/ from a ``tcp:PORT...`` endpoint description."""
    parts = endpoint.split(":")
    if len(parts) < 2 or parts[0] != "tcp":
        raise usage.UsageError(f"cannot derive a WebSocket URL from "
                               f"{endpoint!r}: give --websocket-url")
    return f"ws://localhost:{parts[1]}/"


class _RelayService(Service):
    """Starts the ``current`` updates; at shutdown drops every connection
    and closes the usage writers."""

    def __init__(self, relay):
        self._relay = relay

    def startService(self):
        super().startService()
        self._relay.start()

    def stopService(self):
        super().stopService()
        d = self._relay.drop_all()
        d.addCallback(lambda _: self._relay.stop())
        return d


def makeService(config, reactor=None):
    if reactor is None:
        from twisted.internet import reactor
    extra = []
    if config["usage-events"] is not None:
        import socket

        from wormhole_ops.usage import EventWriter, RelayEvents
        # the recorder blurs each record once, before any writer
        extra.append(RelayEvents(EventWriter(
            reactor, config["usage-events"],
            config["server-id"] or socket.gethostname(),
            prefix="relay-events")))
    try:
        relay = build_relay(reactor, usage_db=config["usage-db"],
                            log_fd=config["log-fd"],
                            blur_usage=config["blur-usage"],
                            limits=config["limits"], extra_writers=extra)
    except SchemaError as e:
        # a database of another layout: one line, no traceback
        raise SystemExit(f"transitrelay: {e}") from e
    parent = MultiService()
    # listening ports stop before the relay service drops the connections
    _RelayService(relay).setServiceParent(parent)
    tcp_factory = make_tcp_factory(relay, reactor=reactor,
                                   splice=not config["no-splice"])
    strports.service(with_backlog(config["port"]),
                     tcp_factory).setServiceParent(parent)
    if config["metrics"] is not None:
        metrics_service(config["metrics"], relay.metrics.registry,
                        relay.health).setServiceParent(parent)
    if config["websocket"] is not None:
        url = config["websocket-url"] or _websocket_url(config["websocket"])
        urlparse(url)  # raises on nonsense before we listen
        factory = make_websocket_factory(
            relay, url, reactor=reactor,
            log_addresses=bool(config["log-addresses"]))
        strports.service(with_backlog(config["websocket"]),
                         factory).setServiceParent(parent)
    log_startup("transitrelay", config)
    return parent
