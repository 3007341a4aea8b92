"""A raw TCP client for the relay's loopback tests: it records every byte,
and hands out Deferreds for "n bytes arrived" and "closed"."""

import hashlib

from twisted.internet.defer import Deferred, inlineCallbacks, returnValue
from twisted.internet.endpoints import TCP4ClientEndpoint
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
    def connect(self, port, protocol=RawClient):
        ep = TCP4ClientEndpoint(self._reactor, "127.0.0.1", port)
        c = yield ep.connect(Factory.forProtocol(protocol))
        self._all.append(c)
        returnValue(c)

    @inlineCallbacks
    def close_all(self):
        for c in self._all:
            if not c.gone:
                c.transport.abortConnection()
        for c in self._all:
            yield c.closed
