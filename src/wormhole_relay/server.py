# -*- test-case-name: tests.relay.test_server -*-
"""Wiring of the Transit relay: one place builds every object.

``build_relay`` makes the pairing, the usage recorder with its writers and
the ``TransitRelay`` that hands each new connection its machine;
``make_tcp_factory`` and ``make_websocket_factory`` are the glue the
listening ports use. ``wormhole_relay.testing`` and the twistd plugin both
build through here.
"""

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import LoopingCall
from zope.interface import implementer

from wormhole_ops.usage import JSONLinesWriter, RelaySQLiteWriter

from ._connection import RelayConnection
from ._interfaces import IPairing, ITransitRelay, ITransportGlue, IUsageRecorder
from ._limits import Limits
from ._metrics import RelayMetrics
from ._pairing import Pairing
from ._tcp import RelayTCPFactory
from ._usage import UsageRecorder
from ._websocket import RelayWebSocketFactory

# the wiring the twistd plugin and wormhole_relay.testing use (the API
# reference documents these)
__all__ = ["TransitRelay", "build_relay", "make_tcp_factory", "make_websocket_factory"]


@implementer(ITransitRelay)
class TransitRelay:
    """Every live connection, the pairing and the usage recorder."""

    def __init__(self, clock, pairing, usage, limits, current_interval=60.0,
                 metrics=None):
        self._clock = clock
        self.metrics = metrics or RelayMetrics()
        self.accepting = False  # between start() and stop()
        self.pairing = IPairing(pairing)
        self.usage = IUsageRecorder(usage)
        self.limits = limits
        self._connections = {}  # RelayConnection -> its glue
        self._trace = None
        self._all_gone = []
        self._current = LoopingCall(self.update_current)
        self._current.clock = clock
        self._current_interval = current_interval
        self.metrics.watch(self)

    def set_trace(self, tracer):
        """``tracer(old_state, input, new_state)`` for every machine made
        from now on (the ``--debug-state`` habit of the client)."""
        self._trace = tracer

    def connection_for(self, glue):
        """A new client connection's machine, speaking through ``glue``."""
        self.metrics.connections.inc()
        conn = RelayConnection(ITransportGlue(glue), self.pairing,
                               self.usage, self._clock, self.limits)
        if self._trace is not None:
            conn.set_trace(self._trace)
        self._connections[conn] = glue
        return conn

    def forget(self, conn):
        """``conn`` has closed; fires ``drop_all``'s waiters when it was the
        last."""
        self._connections.pop(conn, None)
        if not self._connections:
            waiters, self._all_gone = self._all_gone, []
            for d in waiters:
                d.callback(None)

    def connections(self):
        """The connections open now."""
        return list(self._connections)

    def update_current(self):
        """Write the live counts (connected, waiting, bytes in flight)."""
        self.usage.update_current(*self.pairing.stats())

    def health(self):
        """What ``/health`` says."""
        connected, waiting, _ = self.pairing.stats()
        return {"accepting": self.accepting, "paired": connected,
                "waiting": waiting}

    def start(self):
        """Accept connections and start writing the live counts."""
        self.accepting = True
        if self._current_interval:
            self._current.start(self._current_interval, now=True)

    def drop_all(self):
        """Abort every connection (the relay is stopping); the Deferred
        fires once they are all gone."""
        if not self._connections:
            return succeed(None)
        d = Deferred()
        self._all_gone.append(d)
        for glue in list(self._connections.values()):
            glue.abort()
        return d

    def stop(self):
        """Stop accepting, write the live counts once more and close the
        usage writers (a Deferred)."""
        self.accepting = False
        if self._current.running:
            self._current.stop()
        self.update_current()
        return self.usage.close()


def build_relay(clock, usage_db=None, log_fd=None, log_file=None,
                blur_usage=None, limits=None, current_interval=60.0,
                extra_writers=()):
    """Build a ``TransitRelay`` with its pairing, usage recorder and
    writers: ``usage_db`` (SQLite, the reference's layout), ``log_fd`` or
    ``log_file`` (JSON lines), ``extra_writers``; ``blur_usage`` rounds
    the recorded times and sizes (docs/relay.md)."""
    writers = list(extra_writers)
    if usage_db is not None:
        writers.append(RelaySQLiteWriter(clock, usage_db))
    if log_fd is not None:
        writers.append(JSONLinesWriter.from_fd(clock, log_fd))
    if log_file is not None:
        writers.append(JSONLinesWriter(clock, log_file))
    metrics = RelayMetrics()
    usage = UsageRecorder(clock, writers, blur=blur_usage, metrics=metrics)
    limits = limits or Limits()
    pairing = Pairing(clock, usage, limits)
    return TransitRelay(clock, pairing, usage, limits,
                        current_interval=current_interval, metrics=metrics)


def make_tcp_factory(relay, reactor=None, splice=True):
    """``splice=False`` keeps every pair on the plain copying path."""
    return RelayTCPFactory(relay, reactor=reactor, splice=splice)


def make_websocket_factory(relay, url, reactor=None, log_addresses=False):
    """The WebSocket factory a listening port serves ``relay`` with;
    ``log_addresses`` lets the logs name peers."""
    factory = RelayWebSocketFactory(url, relay, reactor=reactor)
    factory.log_addresses = log_addresses
    return factory
