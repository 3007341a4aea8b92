# -*- test-case-name: tests.server.test_plugin -*-
"""``twistd wormhole-mailbox``: the reference's options, plus ours.

Every option of the reference ``magic-wormhole-mailbox-server`` 0.8 keeps its
name and meaning; docs/server.md lists them all with the ones we added.
"""

import json

from twisted.application import strports
from twisted.application.service import MultiService, Service
from twisted.python import usage

from wormhole_ops.listen import with_backlog
from wormhole_ops.logs import log_startup
from wormhole_ops.metrics import metrics_service

from ._limits import Limits
from ._permissions import parse_permissions
from ._schema import SchemaError
from .server import build_mailbox, make_factory

LONGDESC = """\
This plugin sets up a 'Mailbox' server for magic-wormhole. This service
forwards short messages between clients, to perform key exchange and
connection setup. It answers 'list' with the allocated nameplates (for
tab completion), as the reference does, unless --disallow-list is given.
"""

# (option, Limits field, converter, help)
_LIMIT_OPTIONS = [
    ("max-message-size", "max_message_size", int,
     "largest client message accepted, in bytes"),
    ("max-json-depth", "max_json_depth", int,
     "deepest nesting of JSON arrays/objects in a client message"),
    ("max-messages-per-mailbox", "max_messages_per_mailbox", int,
     "messages one mailbox may hold"),
    ("max-bytes-per-mailbox", "max_bytes_per_mailbox", int,
     "bytes of message bodies one mailbox may hold"),
    ("max-send-buffer", "max_send_buffer", int,
     "bytes queued for a client that does not read before it is dropped"),
    ("idle-timeout", "idle_timeout", float,
     "seconds without a message from a client before it is closed"),
    ("bind-timeout", "bind_timeout", float,
     "seconds a client may take to bind after connecting"),
    ("handshake-timeout", "handshake_timeout", float,
     "seconds for the WebSocket opening handshake"),
    ("channel-expiration", "channel_expiration", float,
     "seconds an unattended nameplate or mailbox lives"),
    ("prune-interval", "prune_interval", float,
     "seconds between two looks for expired nameplates and mailboxes"),
]


class Options(usage.Options):
    synopsis = "[--port=] [--log-fd] [--blur-usage=] [--usage-db=]"
    longdesc = LONGDESC

    optFlags = [
        ("log-addresses", None,
         "name clients' IP addresses in log lines (off: never logged)"),
        ("trust-x-real-ip", None,
         "behind a reverse proxy: tell clients the address in its "
         "X-Real-IP/X-Real-Port headers as their 'your-address'"),
        ("disallow-list", None,
         "refuse to send list of allocated nameplates (answer an empty list)"),
        # kept from when listing was off by default: now a no-op
        ("allow-list", None,
         "answer 'list' with the allocated nameplates (the default)"),
    ]
    optParameters = [
        ("port", "p", r"tcp:4000:interface=\:\:", "endpoint to listen on"),
        ("blur-usage", None, None,
         "round logged access times to improve privacy (seconds)", int),
        ("log-fd", None, None,
         "write JSON usage logs to this file descriptor", int),
        ("channel-db", None, "relay.sqlite", "location for the state database"),
        ("usage-db", None, None, "record usage data (SQLite)"),
        ("motd", None, None, "Send a Message of the Day in the welcome"),
        ("signal-error", None, None,
         "force all clients to fail with a message"),
        ("advertise-version", None, None, "version to recommend to clients"),
        ("permissions", None, None,
         "what clients must submit before bind: none, hashcash:BITS, or "
         "none+hashcash:BITS (default: nothing asked, like the reference)"),
        # JSON-lines usage events for wormhole_analytics (docs/usage-events.md)
        ("usage-events", None, None,
         "write usage events (daily JSON-lines files) into this folder"),
        ("server-id", None, None,
         "this server's name in usage events [default: the host name]"),
        ("metrics", None, None,
         "serve /metrics (Prometheus) and /health on this endpoint, e.g. "
         "tcp:9100:interface=127.0.0.1 (off by default)"),
        ("commit-window", None, 0.0,
         "seconds a database batch may collect before it commits", float),
    ] + [(name, None, getattr(Limits(), field), text, conv)
         for name, field, conv, text in _LIMIT_OPTIONS]

    def __init__(self):
        super().__init__()
        self["websocket-protocol-options"] = []

    def opt_websocket_protocol_option(self, arg):
        "A websocket server protocol option to configure: OPTION=VALUE. This option can be provided multiple times."  # noqa: E501
        if "=" not in arg:
            raise usage.UsageError("--websocket-protocol-option wants "
                                   f"OPTION=VALUE, got {arg!r}")
        name, value = arg.split("=", 1)
        try:
            value = json.loads(value)
        except ValueError:
            pass
        self["websocket-protocol-options"].append((name, value))

    def postOptions(self):
        if self["allow-list"] and self["disallow-list"]:
            raise usage.UsageError("--allow-list and --disallow-list "
                                   "contradict each other")
        try:
            parse_permissions(self["permissions"])
        except ValueError as e:
            raise usage.UsageError(str(e)) from e


class _MailboxService(Service):
    """Starts the timers and, at shutdown, commits what is pending."""

    def __init__(self, mailbox):
        self._mailbox = mailbox

    def startService(self):
        super().startService()
        self._mailbox.start()

    def stopService(self):
        super().stopService()
        return self._mailbox.stop()


def attach_usage_events(mailbox, reactor, directory, server_id=None):
    """Send ``mailbox``'s usage records and binds to daily JSON-lines
    files in ``directory`` (docs/usage-events.md); returns the writer,
    which the mailbox closes when it stops. Records arrive blurred
    (``--blur-usage``) from the mailbox's usage log."""
    import socket

    from wormhole_ops.usage import EventWriter, MailboxEvents
    events = MailboxEvents(EventWriter(
        reactor, directory, server_id or socket.gethostname(),
        prefix="mailbox-events"))
    mailbox.usage_log.events = events
    return events


def _build_from(config, reactor, limits):
    return build_mailbox(
        reactor,
        channel_db=config["channel-db"],
        usage_db=config["usage-db"],
        motd=config["motd"],
        signal_error=config["signal-error"],
        advertise_version=config["advertise-version"],
        allow_list=not config["disallow-list"],
        permissions=config["permissions"],
        blur_usage=config["blur-usage"],
        log_fd=config["log-fd"],
        commit_window=config["commit-window"],
        limits=limits,
    )


def makeService(config, reactor=None):
    if reactor is None:
        from twisted.internet import reactor
    limits = Limits(**{field: config[name]
                       for name, field, _, _ in _LIMIT_OPTIONS})
    try:
        mailbox = _build_from(config, reactor, limits)
    except SchemaError as e:
        # a database of another layout: one line, no traceback
        raise SystemExit(f"wormhole-mailbox: {e}") from e
    if config["usage-events"] is not None:
        attach_usage_events(mailbox, reactor, config["usage-events"],
                            config["server-id"])
    factory = make_factory(mailbox, websocket_options=config[
        "websocket-protocol-options"], reactor=reactor,
        log_addresses=bool(config["log-addresses"]),
        trust_x_real_ip=bool(config["trust-x-real-ip"]))
    log_startup("wormhole-mailbox", config)
    parent = MultiService()
    # stopped after the listener (services stop in reverse order); it
    # commits, then writes out the usage log and events
    _MailboxService(mailbox).setServiceParent(parent)
    strports.service(with_backlog(config["port"]),
                     factory).setServiceParent(parent)
    if config["metrics"] is not None:
        metrics_service(config["metrics"], mailbox.metrics.registry,
                        mailbox.health).setServiceParent(parent)
    return parent
