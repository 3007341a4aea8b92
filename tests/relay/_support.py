"""What the relay's test modules share: a TestCase base running a relay
in the test's reactor, a flooding producer, a WebSocket client."""

import hashlib
import os

from autobahn.twisted.websocket import WebSocketClientProtocol
from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.interfaces import IPushProducer
from twisted.trial import unittest
from zope.interface import implementer

from wormhole_relay.testing import start_transit_relay

from ._client import Clients
from ._fakes import SIDE1, SIDE2, TOKEN, handshake


def eventually(seconds=0):
    d = Deferred()
    reactor.callLater(seconds, d.callback, None)
    return d


class Base(unittest.TestCase):
    timeout = 30  # a refusal that never comes fails fast
    splice = True

    @inlineCallbacks
    def start(self, **kw):
        kw.setdefault("splice", self.splice)
        self.r = yield start_transit_relay(reactor, **kw)
        self.addCleanup(self.r.stop)
        self.clients = Clients(reactor, self)

    @inlineCallbacks
    def pair(self, token=TOKEN, sides=(SIDE1, SIDE2)):
        a = yield self.clients.connect(self.r.port)
        b = yield self.clients.connect(self.r.port)
        a.send(handshake(token, sides[0]))
        b.send(handshake(token, sides[1]))
        got_a = yield a.when_received(3)
        got_b = yield b.when_received(3)
        self.assertEqual((got_a, got_b), (b"ok\n", b"ok\n"))
        return a, b

    @inlineCallbacks
    def check_relays(self, a, b, tag=b"ping"):
        """a and b still relay both ways."""
        na, nb = a.count, b.count
        a.send(tag + b"-ab")
        b.send(tag + b"-ba")
        got_b = yield b.when_received(nb + len(tag) + 3)
        got_a = yield a.when_received(na + len(tag) + 3)
        self.assertEqual(got_b[nb:], tag + b"-ab")
        self.assertEqual(got_a[na:], tag + b"-ba")

    @inlineCallbacks
    def until_waiting(self, n):
        """Until the relay has ``n`` connections waiting for a partner
        (handshakes on different sockets arrive in no set order)."""
        for _ in range(1000):
            if self.r.relay.pairing.stats()[1] == n:
                return
            yield eventually(0.005)
        self.fail(f"never {n} waiting: {self.r.relay.pairing.stats()}")

    def usage_moods(self):
        return sorted(r["mood"] for r in self.r.usage())


@implementer(IPushProducer)
class _Flood:
    """Writes 64 KiB chunks into a transport while it is not paused, up to
    ``limit`` bytes, sampling ``probe()`` after each chunk. ``paused``
    fires at the first pause, or when all ``limit`` bytes are written."""

    def __init__(self, transport, limit, probe, prefix=b"ok\n"):
        self._t = transport
        self._limit = limit
        self._probe = probe
        self.sent = 0
        self.sha = hashlib.sha256(prefix)
        self.paused = Deferred()
        self._running = True
        self._stopped = False
        self.max_seen = 0
        transport.registerProducer(self, True)
        reactor.callLater(0, self._pump)

    def _pump(self):
        if self.sent >= self._limit and not self.paused.called:
            # everything went out without a pause: the test will say so
            self.paused.callback(None)
        while self._running and not self._stopped and self.sent < self._limit:
            chunk = os.urandom(65536)
            self.sha.update(chunk)
            self.sent += len(chunk)
            self._t.write(chunk)
            self.max_seen = max(self.max_seen, self._probe())
            if self._running:
                # yield to the reactor so the relay gets to run
                reactor.callLater(0, self._pump)
                return

    def pauseProducing(self):
        self._running = False
        if not self.paused.called:
            self.paused.callback(None)

    def resumeProducing(self):
        self._running = True
        reactor.callLater(0, self._pump)

    def stopProducing(self):
        self._stopped = True

    def stop(self):
        self._stopped = True
        self._t.unregisterProducer()


class WSClient(WebSocketClientProtocol):
    def __init__(self):
        super().__init__()
        self.received = bytearray()
        self.count = 0
        self.sha = hashlib.sha256()
        self.keep = True
        self.gone = False
        self._waiters = []
        self.closed = Deferred()  # fires with (received, close code)

    def onOpen(self):
        self.factory.opened.callback(self)

    def onMessage(self, payload, isBinary):
        assert isBinary, "the relay sends binary messages"
        self.count += len(payload)
        self.sha.update(payload)
        if self.keep:
            self.received += payload
        self._check()

    def _check(self):
        waiting, self._waiters = self._waiters, []
        for n, d in waiting:
            if self.count >= n or self.gone:
                d.callback(bytes(self.received))
            else:
                self._waiters.append((n, d))

    def when_received(self, n):
        d = Deferred()
        self._waiters.append((n, d))
        self._check()
        return d

    def onClose(self, wasClean, code, reason):
        self.gone = True
        self._check()
        if not self.closed.called:
            self.closed.callback((bytes(self.received), code))

    def send(self, data):
        self.sendMessage(data, isBinary=True)
