"""A TCP forwarder between wormhole-william and our Transit relay that
orders the transit handshakes the way wormhole-william 1.0.6 needs as a
sender (tests/files/test_interop_william.py).

Why: wormhole-william's sender opens its relay connection early and, once
it has the receiver's file_ack, reads the relay's ``ok\\n``. While it
does, a helper goroutine of its own waits to close that connection if
another one wins. When ``ok\\n`` *and* the receiver's handshake (which
Transit protocol, "Handshake" makes the receiver send "immediately", so it
follows ``ok`` at once) are both already buffered, the sender gets through
the whole handshake without blocking, picks the relay connection and sends
``go``, before that goroutine ever ran; when it finally runs it sees both
"done" and "another one won", and Go picks one of the two at random: half
the time it closes the connection that won. The sender then fails with
"use of closed network connection" (mid-file on a write, or reading the
ack), whatever the relay: the reference relay 0.5 and ours, splicing or
not, fail alike (docs/relay.md, "wormhole-william as a sender").

What: relay -> client, the first three bytes (``ok\\n``) pass at once and
later ones wait until the client has spoken after them, and SETTLE more.
The sender speaks first (its handshake), so it is blocked reading when
the receiver's handshake reaches it, and its goroutine has run by then. Only the timing
of delivery changes (as a slow network would): every byte goes through,
in order, and half-closes are passed on. Not for wormhole-william as a
receiver: it waits for the sender's handshake before it speaks.

Run as ``python _ww_gate.py LISTEN_PORT RELAY_PORT`` (127.0.0.1 only); it
prints ``gate starting on PORT`` once it listens.
"""

import sys

from twisted.internet.interfaces import IHalfCloseableProtocol
from twisted.internet.protocol import Factory, Protocol
from zope.interface import implementer

OK_LENGTH = 3  # b"ok\n"


# How long after the client spoke the held bytes wait more: the client has
# then surely gone on to its read and blocked there. Without it, its write
# can wake us and the kernel may run us first (one run in 20 with 2 busy
# cores, GOMAXPROCS=1 and the file_ack held back): the handshake is there
# before it reads, and the race is back.
SETTLE = 0.1


class Hold:
    """The rule, without sockets: ``deliver(bytes)`` writes to the client,
    ``clock`` is an ``IReactorTime``."""

    def __init__(self, deliver, clock, settle=SETTLE):
        self._deliver = deliver
        self._clock = clock
        self._settle = settle
        self._passed = 0  # bytes of ok\n delivered
        self._call = None  # the release after the client spoke
        self._open = False  # held bytes went; the rest goes straight
        self._held = []

    def from_relay(self, data):
        if self._passed < OK_LENGTH:
            head = data[:OK_LENGTH - self._passed]
            self._passed += len(head)
            self._deliver(head)
            data = data[len(head):]
        if not data:
            return
        if self._open:
            self._deliver(data)
        else:
            self._held.append(data)

    def from_client(self):
        """Call after forwarding the client's bytes to the relay."""
        if self._passed >= OK_LENGTH and self._call is None and not self._open:
            self._call = self._clock.callLater(self._settle, self.release)

    def release(self):
        """Deliver what is held, and from now on everything at once (also
        when the relay closed: nothing will follow)."""
        self.stop()
        self._open = True
        held, self._held = self._held, []
        for data in held:
            self._deliver(data)

    def stop(self):
        """No release later (the connection is gone, or released now)."""
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None


@implementer(IHalfCloseableProtocol)
class _ToRelay(Protocol):
    def __init__(self, client):
        self.client = client

    def connectionMade(self):
        self.client.relay_connected(self)

    def dataReceived(self, data):
        self.client.hold.from_relay(data)

    def readConnectionLost(self):
        self.client.hold.release()
        self.client.transport.loseWriteConnection()

    def writeConnectionLost(self):
        pass

    def connectionLost(self, reason):
        self.client.hold.release()
        self.client.transport.loseConnection()


@implementer(IHalfCloseableProtocol)
class _FromClient(Protocol):
    relay = None

    def connectionMade(self):
        from twisted.internet import reactor
        from twisted.internet.endpoints import TCP4ClientEndpoint

        self.hold = Hold(self.transport.write, reactor)
        # nothing is read from the client until the relay is connected
        self.transport.pauseProducing()
        ep = TCP4ClientEndpoint(reactor, "127.0.0.1", self.factory.relay_port)
        d = ep.connect(Factory.forProtocol(lambda: _ToRelay(self)))
        d.addErrback(lambda _: self.transport.abortConnection())

    def relay_connected(self, relay):
        self.relay = relay
        self.transport.resumeProducing()

    def dataReceived(self, data):
        self.relay.transport.write(data)
        self.hold.from_client()

    def readConnectionLost(self):
        self.relay.transport.loseWriteConnection()

    def writeConnectionLost(self):
        pass

    def connectionLost(self, reason):
        self.hold.stop()
        if self.relay is not None:
            self.relay.transport.loseConnection()


def main(argv):
    from twisted.internet import reactor

    listen_port, relay_port = int(argv[1]), int(argv[2])
    factory = Factory.forProtocol(_FromClient)
    factory.relay_port = relay_port
    port = reactor.listenTCP(listen_port, factory, interface="127.0.0.1")
    print(f"gate starting on {port.getHost().port}", flush=True)
    reactor.run()


if __name__ == "__main__":
    main(sys.argv)
