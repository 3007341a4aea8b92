# -*- test-case-name: tests.unit.server.test_server -*-
"""Wiring of the Mailbox server: model, store, usage, connections, timers.

``build_mailbox`` makes a ``MailboxServer`` from the operator's options;
``make_factory`` puts the WebSocket glue on top of it. Both the twistd plugin
and ``wormhole_mailbox.testing`` use these two, so tests run what operators
run.
"""

from __future__ import annotations

import ctypes
import gc
import random

from autobahn.websocket.types import ConnectionDeny
from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from wormhole_ops.usage import JSONLinesWriter

from ._connection import Connection, ServerContext
from ._limits import Limits
from ._metrics import MailboxMetrics
from ._model import Model
from ._permissions import parse_permissions
from ._store import MemoryStore, SQLiteStore
from ._usage import UsageLog
from ._websocket import MailboxWebSocketFactory, MailboxWebSocketProtocol

log = Logger()


def _load_malloc_trim():
    """glibc's malloc_trim, or None elsewhere. glibc's soname is always
    libc.so.6: ctypes.util.find_library would run ldconfig, a process, at
    import."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _load_malloc_trim()


class MailboxServer:
    """Owns the model and the connections of one server."""

    def __init__(self, clock, store, usage, policy, limits, welcome,
                 allow_list, rng=None, metrics=None):
        self.clock = clock
        self.store = store
        self.usage_log = usage
        self.limits = limits
        self.model = Model(store, usage, rng or random.SystemRandom(), limits)
        self.model.restore(store.load(), clock.seconds())
        self.metrics = metrics or MailboxMetrics()
        self.ctx = ServerContext(clock, self.model, store, usage, policy,
                                 limits, welcome, allow_list, self.metrics)
        self.connections = set()
        self.metrics.watch(self)
        self._departed = 0
        self._last_trim = 0.0
        self.compactors = []  # called at a trim: shrink grown containers
        self._trim_call = None
        self._sweeper = LoopingCall(self._sweep)
        self._sweeper.clock = clock
        self._pruner = LoopingCall(self.prune)
        self._pruner.clock = clock
        self.started = clock.seconds()
        self.accepting = False  # between start() and stop()
        self._current = LoopingCall(self._update_current)
        self._current.clock = clock

    def connection_for(self, glue):
        """A new client connection's machine, speaking through ``glue`` (the
        WebSocket or in-memory transport); counted in the metrics."""
        self.metrics.connections.inc()
        conn = Connection(self.ctx, glue)
        self.connections.add(conn)
        return conn

    def forget(self, conn):
        """``conn`` has closed: drop it (and, after many departures, hand
        freed memory back to the OS)."""
        self.connections.discard(conn)
        # When many clients have left, hand the memory they used back to
        # the OS (the allocators keep it otherwise); at most every 2 s.
        self._departed += 1
        if self._trim_call is None and (
                self._departed >= 1024 or
                (self._departed >= 64 and not self.connections)):
            delay = max(1.0, self._last_trim + 2.0 - self.clock.seconds())
            self._trim_call = self.clock.callLater(delay, self._trim)

    def _trim(self):
        self._trim_call = None
        self._departed = 0
        self._last_trim = self.clock.seconds()
        # sets and dicts never shrink as entries go: copy the big ones
        self.connections = set(self.connections)
        self.model.compact()
        for compact in self.compactors:
            compact()
        gc.collect()
        if _malloc_trim is not None:
            _malloc_trim(0)

    def start(self):
        """Start the periodic work: the idle sweep, the pruning of old
        nameplates and mailboxes, and the usage database's ``current`` row."""
        limits = self.limits
        sweep = min(limits.bind_timeout, limits.idle_timeout) / 4.0
        self._sweeper.start(max(0.5, min(sweep, 30.0)), now=False)
        self._pruner.start(limits.prune_interval, now=False)
        # the usage database's `current` row, as often as the reference
        # writes it (its munin plugins call a row older than 6 min stale)
        self._current.start(60.0, now=True)
        self.accepting = True

    def _update_current(self):
        self.usage_log.current(self.started, self.clock.seconds(),
                               len(self.connections))

    def health(self):
        """What ``/health`` says: accepting work unless stopping or the
        database fails to commit (answers are then withheld)."""
        failing = self.store.failing
        return {"accepting": self.accepting and not failing,
                "database": "failing" if failing else "ok",
                "connections": len(self.connections)}

    def stop(self):
        """Stop accepting and stop the periodic work; returns a Deferred that
        fires once the stores have committed and closed."""
        self.accepting = False
        for loop in (self._sweeper, self._pruner, self._current):
            if loop.running:
                loop.stop()
        if self._trim_call is not None:
            self._trim_call.cancel()
            self._trim_call = None
        # the last records come as the store commits; then the writers
        d = self.store.close()
        d.addCallback(lambda _: self.usage_log.close())
        return d

    def _sweep(self):
        now = self.clock.seconds()
        for conn in list(self.connections):
            conn.tick(now)

    def prune(self):
        """Mailbox server protocol, "Nameplates": nameplates and mailboxes go "after some period of
        inactivity"; their usage records say `pruney`."""
        now = self.clock.seconds()
        removed = self.model.prune(now, now - self.limits.channel_expiration)
        if removed:
            log.info("pruned {n} idle nameplates/mailboxes", n=removed)
        return removed


def build_mailbox(reactor, channel_db=None, usage_db=None, motd=None,
                  signal_error=None, advertise_version=None, allow_list=True,
                  permissions=None, blur_usage=None, log_fd=None,
                  commit_window=0.0, rng=None, limits=None, keep_usage=0):
    """A ``MailboxServer`` from the operator's options (docs/server.md)."""
    limits = limits or Limits()
    if channel_db is None and usage_db is None:
        store = MemoryStore()
    else:
        store = SQLiteStore(reactor, channel_db or ":memory:", usage_db,
                            commit_window=commit_window)
    metrics = MailboxMetrics()
    log_writer = (JSONLinesWriter.from_fd(reactor, log_fd)
                  if log_fd is not None else None)
    usage = UsageLog(store, blur=blur_usage, log_writer=log_writer,
                     keep=keep_usage, metrics=metrics)
    welcome = {}
    if motd is not None:
        welcome["motd"] = motd
    if signal_error is not None:
        welcome["error"] = signal_error
    if advertise_version is not None:
        welcome["current_cli_version"] = advertise_version
    policy = parse_permissions(permissions) if isinstance(
        permissions, (str, type(None))) else permissions
    return MailboxServer(reactor, store, usage, policy, limits, welcome,
                         allow_list, rng=rng, metrics=metrics)


class _Protocol(MailboxWebSocketProtocol):
    def onConnect(self, request):
        # Client API, "Mailbox Servers": clients use ws://HOST:PORT/v1
        if request.path not in ("/v1", "/v1/"):
            raise ConnectionDeny(404, "this Mailbox server lives at /v1")
        return None

    def connectionMade(self):
        super().connectionMade()
        self.factory.live.add(self)

    def connectionLost(self, reason):
        super().connectionLost(reason)
        self.factory.live.discard(self)
        waiters, self.factory.waiters = self.factory.waiters, []
        if not self.factory.live:
            for d in waiters:
                d.callback(None)
        else:
            self.factory.waiters = waiters


class _Factory(MailboxWebSocketFactory):
    protocol = _Protocol

    def __init__(self, url, mailbox, reactor=None):
        super().__init__(url, mailbox, reactor=reactor)
        self.live = set()
        self.waiters = []

    def compact(self):
        self.live = set(self.live)

    def drop_all(self):
        """Abort every connection; fires when all are gone."""
        if not self.live:
            return succeed(None)
        d = Deferred()
        self.waiters.append(d)
        for proto in list(self.live):
            if proto.transport is not None:
                proto.transport.abortConnection()
        return d


def make_factory(mailbox, url=None, websocket_options=(),
                 reactor=None, log_addresses=False, trust_x_real_ip=False):
    """The WebSocket factory for ``mailbox``; ``websocket_options`` are
    (name, value) pairs for autobahn (``--websocket-protocol-option``)."""
    factory = _Factory(url, mailbox, reactor=reactor)
    factory.log_addresses = log_addresses
    factory.trust_x_real_ip = trust_x_real_ip
    mailbox.compactors.append(factory.compact)
    limits = mailbox.limits
    options = {
        # bigger than our own limit, so that a message a little too large
        # gets a readable `error` and only an absurd one a 1009 close
        "maxMessagePayloadSize": 2 * limits.max_message_size + 65536,
        "maxFramePayloadSize": 2 * limits.max_message_size + 65536,
        "openHandshakeTimeout": limits.handshake_timeout,
        # send the close frame with the proper code (RFC 6455 7.4.1) on a
        # protocol violation instead of just dropping the TCP connection
        "failByDrop": False,
    }
    options.update(dict(websocket_options))
    factory.setProtocolOptions(**options)
    return factory


__all__ = ["MailboxServer", "build_mailbox", "make_factory"]
