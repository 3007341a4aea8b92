# -*- test-case-name: tests.server.test_metrics -*-
"""What the Mailbox server counts for ``--metrics`` (docs/operations.md).

Counters are incremented where things happen; gauges are read from the live
server when Prometheus scrapes. The object always exists (counting costs a
few additions); ``--metrics`` only decides whether it is served.
"""

from prometheus_client import CollectorRegistry, Counter

from wormhole_ops.metrics import LiveGauges

PREFIX = "wormhole_mailbox_"


class MailboxMetrics:
    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Counter(
            PREFIX + "connections", "WebSocket connections accepted",
            registry=r)
        self.sessions = Counter(
            PREFIX + "sessions",
            "finished nameplates and mailboxes, by kind and result (mood)",
            ["kind", "result"], registry=r)
        self.messages = Counter(
            PREFIX + "messages", "messages added to mailboxes", registry=r)
        self.message_bytes = Counter(
            PREFIX + "message_bytes", "bytes of message bodies added",
            registry=r)
        self.errors = Counter(
            PREFIX + "errors", "error messages sent to clients, by kind",
            ["kind"], registry=r)
        self.refused = Counter(
            PREFIX + "refused_messages",
            "client messages refused unparsed by a limit, by limit",
            ["limit"], registry=r)

    def watch(self, server):
        """Gauges read from ``server`` (a MailboxServer) at each scrape."""
        self.registry.register(LiveGauges([
            (PREFIX + "open_connections", "connected clients", None,
             lambda: len(server.connections)),
            (PREFIX + "channels",
             "nameplates and mailboxes now, by kind and state (waiting: one "
             "side; paired: two or more)", ["kind", "state"],
             server.model.census),
            (PREFIX + "database_failing",
             "1 while the last database commit failed (answers are held)",
             None, lambda: int(server.store.failing)),
            (PREFIX + "usage_events_dropped",
             "usage events dropped because the writer's queue was full",
             None, lambda: server.usage_log.events_lost()[0]),
            (PREFIX + "usage_events_lost",
             "usage events whose append failed", None,
             lambda: server.usage_log.events_lost()[1]),
        ]))
