"""What a client learns about its NAT for hole punching (issue 26):
``wormhole._transit._punch`` and ``_observe``."""

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole._transit._observe import observe_welcome
from wormhole._transit._punch import (Mapping, NatObserver, judge,
                                      parse_your_address, punching_disabled,
                                      reusable_binding)


class ParseYourAddress(unittest.TestCase):
    def test_ipv4_and_ipv6(self):
        """The reference 0.8's two shapes."""
        self.assertEqual(parse_your_address(
            {"your-address": {"port": 5, "ipv4": "198.51.100.1"}}), ("198.51.100.1", 5))
        self.assertEqual(parse_your_address(
            {"your-address": {"port": 6, "ipv6": "2001:db8::1"}}), ("2001:db8::1", 6))

    def test_missing_or_malformed(self):
        """What a server should not have sent is no observation at all."""
        for welcome in ({}, {"your-address": "1.2.3.4:5"},
                        {"your-address": {"ipv4": "198.51.100.1"}},
                        {"your-address": {"port": 0, "ipv4": "198.51.100.1"}},
                        {"your-address": {"port": True, "ipv4": "198.51.100.1"}},
                        {"your-address": {"port": 5, "ipv4": "2001:db8::1"}},
                        {"your-address": {"port": 5, "ipv4": "not"}},
                        {"your-address": {"port": 5}}, None):
            self.assertIsNone(parse_your_address(welcome), welcome)


OUT = "203.0.113.9"


class Judge(unittest.TestCase):
    def test_port_kept_is_usable(self):
        """Both connections kept their local port, same outside address:
        the outside address and the first port are advertised."""
        m = judge((4000, (OUT, 4000)), (4100, (OUT, 4100)))
        self.assertEqual((m.local_port, m.outside), (4000, (OUT, 4000)))

    def test_symmetric_ports(self):
        """A NAT that rewrote a port may map each destination anew."""
        for second in ((4100, (OUT, 4100)), (4100, (OUT, 4101))):
            self.assertIsNone(judge((4000, (OUT, 61000)), second).outside)
        self.assertIsNone(judge((4000, (OUT, 4000)), (4100, (OUT, 52001))).outside)

    def test_address_kept_for_forwarded_ports(self):
        """The outside address is known even when the mapping is not
        usable (a forwarded --listen-port is reached there), but not when
        we are not behind a NAT."""
        self.assertEqual(judge((4000, (OUT, 61000)), (4100, (OUT, 52001))).address, OUT)
        self.assertIsNone(judge((4000, ("192.0.2.5", 4000)), None, ("192.0.2.5",)).address)

    def test_address_changes(self):
        """A second outside address (pooling NATs): nothing advertised."""
        m = judge((4000, (OUT, 4000)), (4100, ("203.0.113.10", 4100)))
        self.assertIsNone(m.outside)
        self.assertIn("symmetric", m.reason)

    def test_not_behind_nat(self):
        """Our own address: the local hints already say it."""
        m = judge((4000, ("192.0.2.5", 4000)), None, ("192.0.2.5",))
        self.assertIsNone(m.outside)
        self.assertIn("not behind a NAT", m.reason)

    def test_no_observation(self):
        """Without the server's word or without a second look: nothing."""
        self.assertIsNone(judge((4000, None), None).outside)
        self.assertIsNone(judge((4000, (OUT, 4000)), None).outside)
        self.assertIsNone(judge((4000, (OUT, 4000)), (4100, None)).outside)


class Observer(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.asked = []

    def observer(self, local=()):
        def again(url):
            d = Deferred()
            self.asked.append((url, d))
            return d
        return NatObserver(self.clock, "ws://mb/v1", again, local)

    def welcome(self, port):
        return {"your-address": {"port": port, "ipv4": OUT}}

    def test_two_observations(self):
        """The first welcome starts the second observation; mapping()
        fires with the judgement once it is in."""
        nat = self.observer()
        early = nat.mapping()  # asked before the welcome: it waits
        nat.connected(4000)
        nat.welcomed(self.welcome(4000))
        d = nat.mapping()
        self.assertNoResult(early)
        self.assertNoResult(d)
        (url, second), = self.asked
        self.assertEqual(url, "ws://mb/v1")
        second.callback((4100, self.welcome(4100)))
        expected = Mapping(4000, (OUT, 4000), "the NAT keeps our port", OUT)
        self.assertEqual(self.successResultOf(d), expected)
        self.assertEqual(self.successResultOf(early), expected)
        self.assertEqual(nat.binding()._port, 4000)  # a reconnection reuses it
        self.assertFalse(self.clock.getDelayedCalls())

    def test_second_observation_times_out(self):
        """A second connection that does not answer in time: no hint, and
        the connection is dropped."""
        nat = self.observer()
        nat.connected(4000)
        nat.welcomed(self.welcome(4000))
        d = nat.mapping()
        self.clock.advance(5.0)
        self.assertIsNone(self.successResultOf(d).outside)
        self.assertTrue(self.asked[0][1].called)  # cancelled

    def test_local_address_needs_no_second_look(self):
        """Told our own address: decided at once, no second connection."""
        nat = self.observer(local=(OUT,))
        nat.connected(4000)
        nat.welcomed(self.welcome(4000))
        self.assertEqual(self.asked, [])
        self.assertIsNone(self.successResultOf(nat.mapping()).outside)

    def test_failed_connection_rebinds_any_port(self):
        """After a failed Mailbox connection (its port may be taken by
        now) the next binds any free port, and the Mapping stays."""
        nat = self.observer(local=(OUT,))
        nat.connected(4000)
        nat.welcomed(self.welcome(4000))
        self.assertEqual(nat.binding()._port, 4000)
        nat.connect_failed()
        self.assertEqual(nat.binding()._port, 0)
        nat.connected(4100)
        nat.welcomed(self.welcome(4100))
        self.assertEqual(self.successResultOf(nat.mapping()).local_port, 4000)

    def test_stopped_before_any_welcome(self):
        """A wormhole that stops before its first welcome answers None."""
        nat = self.observer()
        d = nat.mapping()
        nat.stop()
        self.assertIsNone(self.successResultOf(d))

    def test_reconnection_keeps_the_first(self):
        """A later welcome (after a reconnection) changes nothing."""
        nat = self.observer()
        nat.connected(4000)
        nat.welcomed(self.welcome(4000))
        nat.welcomed(self.welcome(4000))
        self.assertEqual(len(self.asked), 1)
        nat.stop()
        self.assertTrue(self.asked[0][1].called)
        self.assertFalse(self.clock.getDelayedCalls())


class Environment(unittest.TestCase):
    def test_env(self):
        """$WORMHOLE_NO_PUNCH turns punching off unless empty or 0."""
        self.assertFalse(punching_disabled({}))
        self.assertFalse(punching_disabled({"WORMHOLE_NO_PUNCH": "0"}))
        self.assertTrue(punching_disabled({"WORMHOLE_NO_PUNCH": "1"}))


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
    """Classic Transit's part (docs/transit.md "Through a NAT")."""

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


class ListenPort(unittest.TestCase):
    def test_configured_listen_port(self):
        """listen_port= wins over $WORMHOLE_LISTEN_PORT; a bad value is a
        clear error naming where it came from."""
        from wormhole._transit._addresses import configured_listen_port
        self.assertIsNone(configured_listen_port(environ={}))
        self.assertEqual(configured_listen_port(environ={"WORMHOLE_LISTEN_PORT": "4700"}), 4700)
        self.assertEqual(configured_listen_port(4701, {"WORMHOLE_LISTEN_PORT": "4700"}), 4701)
        for bad in ("x", "0", "70000"):
            e = self.assertRaises(ValueError, configured_listen_port,
                                  environ={"WORMHOLE_LISTEN_PORT": bad})
            self.assertIn("WORMHOLE_LISTEN_PORT", str(e))
        self.assertRaises(ValueError, configured_listen_port, True)

    def test_forwarded_hint(self):
        """The outside address with the fixed port, at -1.0."""
        from wormhole._transit._punch import forwarded_hint
        m = Mapping(4000, None, "symmetric", OUT)
        self.assertEqual(forwarded_hint(m, 47000).to_dict(), {
            "type": "direct-tcp-v1", "hostname": OUT, "port": 47000, "priority": -1.0})
        self.assertIsNone(forwarded_hint(m, None))
        self.assertIsNone(forwarded_hint(Mapping(4000, None, "not behind a NAT"), 47000))


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
