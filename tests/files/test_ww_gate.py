"""The forwarder that orders wormhole-william's transit handshakes
(``_ww_gate``): its rule without sockets, and its protocols on loopback."""
from twisted.internet import defer, endpoints, protocol, reactor
from twisted.internet.interfaces import IHalfCloseableProtocol
from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface import implementer

from ._ww_gate import Hold, _FromClient

HEADER = b"transit receiver 00 ready\n\n"


class HoldRule(unittest.TestCase):
    def setUp(self):
        self.delivered = []
        self.clock = Clock()
        self.hold = Hold(self.delivered.append, self.clock, settle=0.1)

    def test_ok_passes_the_rest_waits_for_the_client(self):
        """ok\\n reaches the client at once; the partner's handshake in the
        same chunk waits until the client has spoken and SETTLE more, then
        goes first, and later bytes go straight through."""
        self.hold.from_relay(b"ok\n" + HEADER)
        self.assertEqual(self.delivered, [b"ok\n"])
        self.hold.from_relay(b"go\n")
        self.assertEqual(self.delivered, [b"ok\n"])
        self.hold.from_client()
        self.clock.advance(0.05)
        self.assertEqual(self.delivered, [b"ok\n"])
        self.hold.from_client()  # speaking again does not restart the wait
        self.clock.advance(0.05)
        self.assertEqual(self.delivered, [b"ok\n", HEADER, b"go\n"])
        self.hold.from_relay(b"records")
        self.assertEqual(self.delivered[-1], b"records")

    def test_ok_in_pieces(self):
        """ok\\n split over reads still passes whole before anything is
        held."""
        self.hold.from_relay(b"o")
        self.hold.from_relay(b"k\n" + HEADER)
        self.assertEqual(b"".join(self.delivered), b"ok\n")

    def test_speaking_before_ok_does_not_count(self):
        """Bytes the client sent before ok\\n (its relay handshake) do not
        release anything."""
        self.hold.from_client()
        self.hold.from_relay(b"ok\n" + HEADER)
        self.clock.advance(1)
        self.assertEqual(self.delivered, [b"ok\n"])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_release_when_the_relay_closes(self):
        """When the relay closes, what is held is delivered at once (before
        the end of file is passed on), and the timer is cancelled."""
        self.hold.from_relay(b"ok\n" + HEADER)
        self.hold.from_client()
        self.hold.release()
        self.assertEqual(self.delivered, [b"ok\n", HEADER])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_stop(self):
        """stop() (the client went) cancels the release."""
        self.hold.from_relay(b"ok\n" + HEADER)
        self.hold.from_client()
        self.hold.stop()
        self.clock.advance(1)
        self.assertEqual(self.delivered, [b"ok\n"])


class OverLoopback(unittest.TestCase):
    """The forwarder's protocols in this reactor, between a raw client and
    a fake relay that says ok and the partner's handshake at once."""

    @defer.inlineCallbacks
    def test_order_bytes_and_end_of_file(self):
        """The client gets ok\\n alone, the partner's handshake only after
        it spoke, everything the relay sent before its end of file, and
        then the end of file; the relay gets every client byte."""
        relay_got = []
        relay_done = defer.Deferred()

        @implementer(IHalfCloseableProtocol)
        class FakeRelay(protocol.Protocol):
            def dataReceived(self, data):
                relay_got.append(data)
                if b"".join(relay_got) == b"please relay\n":
                    self.transport.write(b"ok\n" + HEADER)
                elif b"".join(relay_got).endswith(b"bye"):
                    self.transport.write(b"records")
                    self.transport.loseWriteConnection()

            def readConnectionLost(self):
                relay_done.callback(b"".join(relay_got))

            def writeConnectionLost(self):
                pass

        relay_port = yield reactor.listenTCP(
            0, protocol.Factory.forProtocol(FakeRelay), interface="127.0.0.1")
        self.addCleanup(relay_port.stopListening)
        gate_factory = protocol.Factory.forProtocol(_FromClient)
        gate_factory.relay_port = relay_port.getHost().port
        gate_port = yield reactor.listenTCP(0, gate_factory, interface="127.0.0.1")
        self.addCleanup(gate_port.stopListening)

        received = []
        first = defer.Deferred()
        eof = defer.Deferred()

        @implementer(IHalfCloseableProtocol)
        class Client(protocol.Protocol):
            def dataReceived(self, data):
                received.append(data)
                if not first.called:
                    first.callback(bytes(data))

            def readConnectionLost(self):
                eof.callback(b"".join(received))
                self.transport.loseConnection()

            def writeConnectionLost(self):
                pass

        ep = endpoints.TCP4ClientEndpoint(reactor, "127.0.0.1",
                                          gate_port.getHost().port)
        client = yield ep.connect(protocol.Factory.forProtocol(Client))
        self.addCleanup(client.transport.abortConnection)
        client.transport.write(b"please relay\n")
        got = yield first
        self.assertEqual(got, b"ok\n")
        client.transport.write(b"transit sender 00 ready\n\nbye")
        everything = yield eof
        self.assertEqual(everything, b"ok\n" + HEADER + b"records")
        client.transport.loseWriteConnection()
        relayed = yield relay_done
        self.assertEqual(relayed, b"please relay\ntransit sender 00 ready\n\nbye")
