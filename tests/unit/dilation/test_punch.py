"""Dilation's part of NAT hole punching (docs/transit.md,
"Through a NAT: hole punching"): the Connector listens on the Mailbox
connection's port, advertises the outside hint at priority -1.0, and dials
the peer's outside hints from that port."""

from twisted.internet.defer import Deferred
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest

from wormhole._dilation._connector import RELAY_DELAY, Connector
from wormhole._transit._dialing import DIAL_STAGGER
from wormhole._transit._hints import DirectTCPV1Hint, RelayV1Hint
from wormhole._transit._punch import Mapping

from .fakes import KEY, SIDE, FakeManager

OUTSIDE = {"type": "direct-tcp-v1", "hostname": "203.0.113.20", "port": 41000,
           "priority": -1.0}
LOCAL = {"type": "direct-tcp-v1", "hostname": "10.0.2.2", "port": 5000, "priority": 0.0}


class FakeNat:
    def __init__(self):
        self.asked = []

    def mapping(self):
        d = Deferred()
        self.asked.append(d)
        return d


class Punching(unittest.TestCase):
    def make(self, nat, no_listen=False):
        self.reactor = MemoryReactorClock()
        self.manager = FakeManager()
        relay = RelayV1Hint((DirectTCPV1Hint("198.18.0.3", 4001, 0.0),))
        self.c = Connector(KEY, True, SIDE, self.reactor, self.reactor, self.manager,
                           relay_hint=relay, addresses=("10.0.1.2",),
                           no_listen=no_listen, nat=nat)
        return self.c

    def dialled(self):
        return [(h, p, b) for h, p, _, _, b in self.reactor.tcpClients]

    def test_outside_hint_advertised_and_dialled_from_the_port(self):
        """Once the mapping is known: a listener on its local port (reuse
        flags set), one more hints message with the outside address at
        -1.0, and the peer's outside hint, held until then, dialled from
        that port with "(through NAT)" in its description. Local hints are
        dialled at once from any port; the relay keeps its delay."""
        nat = FakeNat()
        c = self.make(nat)
        c.start()
        c.got_hints([OUTSIDE, LOCAL])
        self.reactor.advance(DIAL_STAGGER)
        self.assertEqual(self.dialled(), [("10.0.2.2", 5000, None)])
        nat.asked[0].callback(Mapping(40000, ("198.51.100.7", 40000), "kept"))
        self.assertEqual(self.manager.hints[-1], [{
            "type": "direct-tcp-v1", "hostname": "198.51.100.7", "port": 40000,
            "priority": -1.0}])
        binding = self.reactor.tcpServers[-1][0]
        self.assertEqual((binding._port, binding._reuseAddress, binding._reusePort),
                         (40000, True, True))
        self.reactor.advance(DIAL_STAGGER)
        host, port, factory, _, bind = self.reactor.tcpClients[-1]
        self.assertEqual((host, port), ("203.0.113.20", 41000))
        self.assertEqual((bind._port, bind._reusePort), (40000, True))
        proto = factory.buildProtocol(None)._wrappedProtocol
        self.assertEqual(proto.description, "->tcp:203.0.113.20:41000 (through NAT)")
        self.reactor.advance(RELAY_DELAY)
        self.assertEqual(self.dialled()[-1][:2], ("198.18.0.3", 4001))

    def test_no_usable_mapping(self):
        """A symmetric NAT (no outside address): nothing more advertised
        or listened on; the peer's outside hint is still dialled, from any
        port (its NAT may be a full cone)."""
        nat = FakeNat()
        c = self.make(nat)
        c.start()
        hints_before = len(self.manager.hints)
        listeners = len(self.reactor.tcpServers)
        c.got_hints([OUTSIDE])
        nat.asked[0].callback(Mapping(40000, None, "symmetric"))
        self.reactor.advance(DIAL_STAGGER)
        self.assertEqual(len(self.manager.hints), hints_before)
        self.assertEqual(len(self.reactor.tcpServers), listeners)
        self.assertEqual(self.dialled(), [("203.0.113.20", 41000, None)])

    def test_hints_after_the_mapping(self):
        """An outside hint that arrives after the mapping is dialled from
        the port at once."""
        nat = FakeNat()
        c = self.make(nat)
        c.start()
        nat.asked[0].callback(Mapping(40000, ("198.51.100.7", 40000), "kept"))
        c.got_hints([OUTSIDE])
        self.reactor.advance(DIAL_STAGGER)
        self.assertEqual(self.dialled()[-1][2]._port, 40000)

    def test_stopped_before_the_mapping(self):
        """A generation stopped (or selected) before the observer answered
        neither listens nor advertises nor dials then."""
        nat = FakeNat()
        c = self.make(nat)
        c.start()
        c.got_hints([OUTSIDE])
        c.stop()
        hints_before = len(self.manager.hints)
        listeners = len(self.reactor.tcpServers)
        nat.asked[0].callback(Mapping(40000, ("198.51.100.7", 40000), "kept"))
        self.assertEqual(len(self.manager.hints), hints_before)
        self.assertEqual(len(self.reactor.tcpServers), listeners)
        self.assertEqual(self.dialled(), [])

    def test_no_listen_no_punch(self):
        """no_listen (and Tor) leaves punching out altogether."""
        nat = FakeNat()
        c = self.make(nat, no_listen=True)
        c.start()
        self.assertEqual(nat.asked, [])
