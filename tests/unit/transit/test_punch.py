"""What a client learns about its NAT for hole punching (docs/transit.md,
"Through a NAT: hole punching"): ``wormhole._transit._punch`` and
``_observe`` without a socket (over loopback:
tests/transit/test_punch_loopback.py)."""

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole._transit._punch import (
    Mapping,
    NatObserver,
    judge,
    parse_your_address,
    punching_disabled,
)


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
