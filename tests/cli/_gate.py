"""A TCP forwarder in front of the Transit relay that stops forwarding a
connection once ``limit`` bytes went from its client towards the relay,
and fires ``reached``: a test then knows the receiver has at most that
much of a file, and can kill a peer at a chosen point of a real
transfer (no timing, no sleeps). When either end closes, the other end is
closed too, as the relay itself would (a held connection reads nothing, so
it notices its own end only after ``drain()``). ``release()`` forwards
again everything, held bytes first: the stream goes on intact (a test
lets an interrupted sender's last records through)."""
import socket

from twisted.internet import defer, protocol
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

RECEIVE_BUFFER = 128 * 1024


class _Upstream(protocol.Protocol):
    def __init__(self, downstream):
        self.downstream = downstream

    def dataReceived(self, data):
        self.downstream.transport.write(data)

    def connectionLost(self, reason):
        self.downstream.transport.loseConnection()


class _Downstream(protocol.Protocol):
    def __init__(self, gate):
        self.gate = gate
        self.upstream = None
        self.pending = []
        self.forwarded = 0
        self.stopped = False
        self.held = b""  # read past the limit, forwarded on release()

    def connectionMade(self):
        # a fixed, small receive buffer (no autotuning up to tcp_rmem's
        # maximum): what the gate holds back stays with the sender
        self.transport.getHandle().setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                              RECEIVE_BUFFER)
        self.transport.pauseProducing()
        d = connectProtocol(TCP4ClientEndpoint(self.gate.reactor, "127.0.0.1",
                                               self.gate.relay_port), _Upstream(self))
        d.addCallbacks(self._connected, lambda f: self.transport.loseConnection())

    def _connected(self, upstream):
        self.upstream = upstream
        self.gate.upstreams.append(upstream)
        self.transport.resumeProducing()

    def dataReceived(self, data):
        if self.gate.released:
            self.upstream.transport.write(data)
            return
        if self.stopped:
            return  # the peer is about to be killed: nothing more goes through
        room = self.gate.limit - self.forwarded
        if len(data) >= room:
            data, self.held = data[:room], data[room:]
            self.stopped = True
            self.transport.pauseProducing()
        self.forwarded += len(data)
        self.upstream.transport.write(data)
        if self.stopped and not self.gate.reached.called:
            self.gate.reached.callback(self.forwarded)

    def connectionLost(self, reason):
        if self.upstream is not None:
            self.upstream.transport.loseConnection()


class Gate(protocol.Factory):
    def __init__(self, reactor, relay_port, limit):
        self.reactor = reactor
        self.relay_port = relay_port
        self.limit = limit
        self.reached = defer.Deferred()
        self.released = False
        self.upstreams = []
        self.downstreams = []

    def buildProtocol(self, addr):
        p = _Downstream(self)
        self.downstreams.append(p)
        return p

    def drain(self):
        """Read (and drop) what the held connections send: a held
        connection reads nothing, so without this it would never see
        its peer's end."""
        for d in self.downstreams:
            if d.stopped:
                d.transport.resumeProducing()


    def release(self):
        """Forward everything again, what was held first."""
        self.released = True
        for d in self.downstreams:
            if d.stopped:
                d.stopped = False
                held, d.held = d.held, b""
                d.upstream.transport.write(held)
                d.transport.resumeProducing()


@defer.inlineCallbacks
def start_gate(testcase, reactor, relay_port, limit):
    """A Gate on a free 127.0.0.1 port; returns (gate, its port)."""
    gate = Gate(reactor, relay_port, limit)
    port = yield reactor.listenTCP(0, gate, interface="127.0.0.1")
    testcase.addCleanup(port.stopListening)

    def close_all():
        for u in gate.upstreams:
            u.transport.abortConnection()
    testcase.addCleanup(close_all)
    return gate, port.getHost().port
