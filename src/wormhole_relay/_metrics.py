# -*- test-case-name: tests.relay.test_metrics -*-
"""What the Transit relay counts for ``--metrics`` (docs/operations.md).

Counters are incremented where things happen (the recorder counts each
finished session before ``--blur-usage`` rounds it: a total over many
sessions reveals no single one); gauges are read from the live relay when
Prometheus scrapes. The object always exists; ``--metrics`` only decides
whether it is served.
"""

from prometheus_client import CollectorRegistry, Counter

from wormhole_ops.metrics import LiveGauges

PREFIX = "wormhole_relay_"


class RelayMetrics:
    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Counter(
            PREFIX + "connections", "connections accepted (TCP and "
            "WebSocket)", registry=r)
        self.sessions = Counter(
            PREFIX + "sessions", "finished pairs (happy) and unpaired "
            "connections (other moods), by result", ["result"], registry=r)
        self.bytes = Counter(
            PREFIX + "bytes_relayed", "bytes relayed by finished sessions, "
            "both directions", registry=r)

    def record(self, total_bytes, mood):
        self.sessions.labels(mood).inc()
        self.bytes.inc(total_bytes)

    def watch(self, relay):
        """Gauges read from ``relay`` (a TransitRelay) at each scrape."""
        def stat(i):
            return lambda: relay.pairing.stats()[i]
        self.registry.register(LiveGauges([
            (PREFIX + "open_connections", "live connections", None,
             lambda: len(relay.connections())),
            (PREFIX + "paired_connections", "connections in a pair", None,
             stat(0)),
            (PREFIX + "waiting_connections",
             "connections waiting for their partner", None, stat(1)),
            (PREFIX + "incomplete_bytes",
             "bytes moved so far by pairs still open", None, stat(2)),
        ]))
