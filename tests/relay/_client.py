"""A raw TCP client for the relay's loopback tests: it records every byte,
and hands out Deferreds for "n bytes arrived" and "closed"."""

import hashlib

from twisted.internet.defer import Deferred, inlineCallbacks, returnValue
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP6ClientEndpoint
from twisted.internet.protocol import Factory, Protocol


class RawClient(Protocol):
    def __init__(self):
        self.received = bytearray()
        self.count = 0
        self.sha = hashlib.sha256()
        self.keep = True  # False: only count and hash (big transfers)
        self._waiters = []  # (n, Deferred)
        self.closed = Deferred()
        self.gone = False

    def dataReceived(self, data):
        self.count += len(data)
        self.sha.update(data)
        if self.keep:
            self.received += data
        self._check()

    def _check(self):
        waiting, self._waiters = self._waiters, []
        for n, d in waiting:
            if self.count >= n or self.gone:
                d.callback(bytes(self.received))
            else:
                self._waiters.append((n, d))

    def when_received(self, n):
        """Fires with everything received once ``n`` bytes have come (or
        the connection closed first)."""
        d = Deferred()
        self._waiters.append((n, d))
        self._check()
        return d

    def connectionLost(self, reason):
        self.gone = True
        self._check()
        self.closed.callback(bytes(self.received))

    def send(self, data):
        self.transport.write(data)


class Clients:
    """Connects RawClients to one port and aborts them all at cleanup."""

    def __init__(self, reactor, testcase):
        self._reactor = reactor
        self._all = []
        testcase.addCleanup(self.close_all)

    @inlineCallbacks
    def connect(self, port, protocol=RawClient, host="127.0.0.1"):
        endpoint = TCP6ClientEndpoint if ":" in host else TCP4ClientEndpoint
        ep = endpoint(self._reactor, host, port)
        c = yield ep.connect(Factory.forProtocol(protocol))
        self._all.append(c)
        returnValue(c)

    @inlineCallbacks
    def relay_pair(self, port, token, size, host="127.0.0.1"):
        """Two sides paired on ``token`` (handshakes with sides: Transit
        protocol, "Relay Handshake");
        ``size`` bytes each way, then one side closes and the other sees
        it."""
        from ._fakes import SIDE1, SIDE2, handshake
        a = yield self.connect(port, host=host)
        a.send(handshake(token, SIDE1))
        b = yield self.connect(port, host=host)
        b.send(handshake(token, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        a.send(b"a" * size)
        b.send(b"b" * size)
        yield a.when_received(3 + size)
        yield b.when_received(3 + size)
        a.transport.loseConnection()
        yield b.closed

    @inlineCallbacks
    def close_all(self):
        for c in self._all:
            if not c.gone:
                c.transport.abortConnection()
        for c in self._all:
            yield c.closed
