"""What a client learns about its NAT for hole punching (docs/transit.md,
"Through a NAT: hole punching"), over real sockets on 127.0.0.1: the
second observation against our server, the reusable port, classic
Transit's punch listener (the parts without a socket are unit tests:
tests/unit/transit/test_punch.py)."""

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.protocol import Factory, Protocol
from twisted.trial import unittest

from wormhole._transit._observe import observe_welcome
from wormhole._transit._punch import Mapping, parse_your_address, reusable_binding


class OverLoopback(unittest.TestCase):
    @inlineCallbacks
    def test_observe_welcome(self):
        """The second observation against our server: the port it names
        is the one the connection left from."""
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor)
        self.addCleanup(srv.stop)
        local_port, welcome = yield observe_welcome(reactor, srv.url)
        self.assertEqual(parse_your_address(welcome), ("127.0.0.1", local_port))

    @inlineCallbacks
    def test_reusable_port_shared(self):
        """The point of the reusable binding: a listener and a second
        outbound connection share the port of a connection that is
        still open (Twisted's public makeBinding)."""
        server = reactor.listenTCP(0, Factory.forProtocol(Protocol),
                                   interface="127.0.0.1")
        self.addCleanup(server.stopListening)
        from twisted.internet.endpoints import TCP4ClientEndpoint
        first = yield TCP4ClientEndpoint(
            reactor, "127.0.0.1", server.getHost().port,
            bindAddress=reusable_binding()).connect(Factory.forProtocol(Protocol))
        self.addCleanup(first.transport.loseConnection)
        port = first.transport.getHost().port
        listener = reactor.listenTCP(reusable_binding(port),
                                     Factory.forProtocol(Protocol))
        self.addCleanup(listener.stopListening)
        self.assertEqual(listener.getHost().port, port)
        other = reactor.listenTCP(0, Factory.forProtocol(Protocol),
                                  interface="127.0.0.1")
        self.addCleanup(other.stopListening)
        second = yield TCP4ClientEndpoint(
            reactor, "127.0.0.1", other.getHost().port,
            bindAddress=reusable_binding(port)).connect(Factory.forProtocol(Protocol))
        self.addCleanup(second.transport.loseConnection)
        self.assertEqual(second.transport.getHost().port, port)


class ClassicTransit(unittest.TestCase):
    """Classic Transit's part (docs/transit.md, "Through a NAT: hole punching")."""

    @inlineCallbacks
    def test_outside_hint_and_punch_listener(self):
        """Given the wormhole's mapping, the hints end with the outside
        address at -1.0 (before the relay) and the mapping's port accepts
        connections, described "(through NAT)"; without an outside address
        nothing is added."""
        from twisted.internet.defer import succeed

        from wormhole.transit import TransitSender
        probe = reactor.listenTCP(reusable_binding(), Factory.forProtocol(Protocol))
        port = probe.getHost().port
        yield probe.stopListening()
        t = TransitSender("tcp:198.18.0.1:4001", listen_addresses=["127.0.0.1"])
        self.addCleanup(t.stop)
        t.set_nat_mapping(succeed(Mapping(port, ("203.0.113.5", 41000), "kept")))
        hints = yield t.get_connection_hints()
        self.assertEqual([h.get("priority") for h in hints[:2]], [0.0, -1.0])
        self.assertEqual(hints[1]["hostname"], "203.0.113.5")
        self.assertEqual(hints[2]["type"], "relay-v1")
        from twisted.internet.endpoints import TCP4ClientEndpoint
        proto = yield TCP4ClientEndpoint(reactor, "127.0.0.1", port).connect(
            Factory.forProtocol(Protocol))
        from twisted.internet.task import deferLater
        while not t._early_inbound:  # until the listener has accepted it
            yield deferLater(reactor, 0.01, lambda: None)
        # the path line names a connection that came in through the NAT
        self.assertTrue(t._early_inbound[-1][1].endswith(" (through NAT)"))
        proto.transport.loseConnection()
        t2 = TransitSender(None, listen_addresses=["127.0.0.1"])
        self.addCleanup(t2.stop)
        t2.set_nat_mapping(succeed(Mapping(port, None, "symmetric")))
        self.assertEqual(len((yield t2.get_connection_hints())), 1)

    def test_outside_hints_dialled_from_the_port(self):
        """The peer's outside hint is dialled from our punching port (reuse
        flags on), described "(through NAT)"; its local hints as before."""
        from twisted.internet.testing import MemoryReactorClock

        from wormhole._transit._attempts import Attempts
        from wormhole._transit._dialing import DialQueue
        from wormhole._transit._hints import DirectTCPV1Hint

        from .fakes import FakeSelection
        r = MemoryReactorClock()
        a = Attempts(r, b"\x01" * 32, True, "00112233aabbccdd",
                     [DirectTCPV1Hint("10.0.2.2", 5000, 0.0),
                      DirectTCPV1Hint("203.0.113.20", 41000, -1.0)], [],
                     dial_queue=DialQueue(r, stagger=0.0), punch_port=40000)
        a.wire(FakeSelection([]))
        a.launch_direct()
        r.advance(0)
        (_, _, _, _, first), (host, port, factory, _, bind) = r.tcpClients
        self.assertIsNone(first)
        self.assertEqual((host, port, bind._port, bind._reusePort),
                         ("203.0.113.20", 41000, 40000, True))
        a.stop_all_except(None)


class MailboxConnection(unittest.TestCase):
    def close(self, w):
        from wormhole.errors import LonelyError
        return self.assertFailure(w.close(), LonelyError)  # nobody came

    @inlineCallbacks
    def test_wormhole_binds_a_reusable_port(self):
        """A wormhole's Mailbox connection leaves from a port that Transit
        and Dilation can listen on while it is open; on loopback the
        server names one of our own addresses: no outside hint, no
        second connection."""
        import io

        from wormhole import create
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor)
        self.addCleanup(srv.stop)
        w = create("example.com/punch", srv.url, reactor, stderr=io.StringIO())
        yield w.get_welcome()
        mapping = yield w._nat_mapping()
        local = w._boss._RC._ws.transport.getHost().port
        self.assertEqual(mapping.local_port, local)
        self.assertIsNone(mapping.outside)
        self.assertIn("not behind a NAT", mapping.reason)
        listener = reactor.listenTCP(reusable_binding(local), Factory.forProtocol(Protocol))
        yield listener.stopListening()
        yield self.close(w)

    @inlineCallbacks
    def test_no_punch(self):
        """create(_punch=False): no observer, mapping None."""
        import io

        from wormhole import create
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor)
        self.addCleanup(srv.stop)
        w = create("example.com/punch", srv.url, reactor, stderr=io.StringIO(),
                   _punch=False)
        yield w.get_welcome()
        self.assertIsNone((yield w._nat_mapping()))
        yield self.close(w)
