"""A loopback TCP proxy the tests can cut: every connection to it is
forwarded to a target; ``cut()`` aborts every forwarded connection at once
(a network change, as far as both ends can tell)."""

from twisted.internet import protocol


class _Back(protocol.Protocol):
    def connectionMade(self):
        self.front.back_ready(self)

    def dataReceived(self, data):
        self.front.transport.write(data)

    def connectionLost(self, reason):
        self.front.transport.loseConnection()


class _Front(protocol.Protocol):
    def connectionMade(self):
        self.pending = []
        self.back = None
        self.factory.live.add(self)
        f = protocol.ClientFactory()
        f.protocol = _Back
        front = self

        def build(addr):
            p = _Back()
            p.front = front
            return p
        f.buildProtocol = build
        self.factory.reactor.connectTCP(self.factory.host, self.factory.port, f)

    def back_ready(self, back):
        self.back = back
        for d in self.pending:
            back.transport.write(d)
        self.pending = []

    def dataReceived(self, data):
        if self.back is None:
            self.pending.append(data)
        else:
            self.back.transport.write(data)

    def connectionLost(self, reason):
        self.factory.live.discard(self)
        if self.back is not None:
            self.back.transport.loseConnection()

    def abort(self):
        self.transport.abortConnection()
        if self.back is not None:
            self.back.transport.abortConnection()


class CuttableProxy(protocol.Factory):
    protocol = _Front

    def __init__(self, reactor, host, port):
        self.reactor = reactor
        self.host = host
        self.port = port
        self.live = set()
        self.cuts = 0

    def cut(self):
        self.cuts += 1
        for front in list(self.live):
            front.abort()
