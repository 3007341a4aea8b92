"""The attempts behind one connect(): what gets dialed, when connect()
may give up early, and that losers are stopped (Transit protocol,
"Handshake", "Relay")."""

from twisted.internet import defer, task
from twisted.internet.testing import StringTransport
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._interfaces import ITorManager
from wormhole._transit import _codec
from wormhole._transit._attempts import Attempts
from wormhole._transit._dialing import DIAL_STAGGER, DialQueue
from wormhole._transit._hints import DirectTCPV1Hint, RelayV1Hint, TorTCPV1Hint
from wormhole._transit._interfaces import IAttempts, IRecordPipe

from ...transit.fakes import FakeSelection

KEY = b"\x01" * 32
SIDE = "00112233aabbccdd"


class FakeEndpoint:
    """Records the dial; the test fires or fails it."""

    def __init__(self, hint, dials):
        self.hint = hint
        self.cancelled = False
        self.d = defer.Deferred(lambda d: setattr(self, "cancelled", True))
        self._dials = dials

    def connect(self, factory):
        self._dials.append(self)
        self.factory = factory
        return self.d

    def succeed(self):
        proto = self.factory.buildProtocol(None)
        proto.makeConnection(StringTransport())
        self.d.callback(proto)
        return proto


class AttemptsTests(unittest.TestCase):
    def build(self, direct=(), relays=(), listening=False):
        self.events = []
        self.dials = []
        self.stopped = []
        self.selection = FakeSelection(self.events)
        self.clock = task.Clock()
        a = Attempts(None, KEY, True, SIDE, direct, relays, listening=listening,
                     on_stop=lambda: self.stopped.append(True),
                     endpoint_for=lambda h: None if isinstance(h, TorTCPV1Hint)
                     else FakeEndpoint(h, self.dials),
                     dial_queue=DialQueue(self.clock))
        a.wire(self.selection)
        verifyObject(IAttempts, a)
        return a

    def test_direct_then_relay(self):
        """launch_direct dials each direct hint; launch_relay each relay's
        hints, and those connections open with the relay line."""
        d1, d2 = DirectTCPV1Hint("127.0.0.1", 1), DirectTCPV1Hint("127.0.0.1", 2)
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 3),))
        a = self.build([d1, d2], [relay])
        a.launch_direct()
        self.clock.advance(DIAL_STAGGER)
        self.assertEqual([e.hint for e in self.dials], [d1, d2])
        a.launch_relay()
        self.clock.advance(DIAL_STAGGER)
        self.assertEqual(self.dials[2].hint, relay.hints[0])
        proto = self.dials[2].succeed()
        self.assertEqual(proto.transport.value(), _codec.relay_handshake(KEY, SIDE))
        self.assertEqual(self.events, [])

    def test_tor_hint_skipped(self):
        """Without Tor a tor-tcp-v1 hint is skipped (with a log note)."""
        a = self.build([TorTCPV1Hint("x.onion", 80)], [])
        a.launch_direct()
        self.assertEqual(self.dials, [])
        self.assertEqual(self.events[0][0], "selection.all_failed")

    def test_all_failed_waits_for_relays(self):
        """Direct dials failing before the relays were launched is not the
        end; once the relays failed too, the selection hears all_failed."""
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 3),))
        a = self.build([DirectTCPV1Hint("127.0.0.1", 1)], [relay])
        a.launch_direct()
        self.dials[0].d.errback(ConnectionRefusedError("refused"))
        self.assertEqual(self.events, [])
        a.launch_relay()
        # the relay dial waits its turn in the queue: still not the end
        self.assertEqual(self.events, [])
        self.clock.advance(DIAL_STAGGER)
        self.dials[1].d.errback(ConnectionRefusedError("no relay"))
        self.assertEqual(self.events[0][0], "selection.all_failed")
        self.assertIn("no relay", self.events[0][1])

    def test_listening_never_gives_up_early(self):
        """While we listen, a peer may still dial in: no all_failed."""
        a = self.build([DirectTCPV1Hint("127.0.0.1", 1)], [], listening=True)
        a.launch_direct()
        self.dials[0].d.errback(ConnectionRefusedError("refused"))
        self.assertEqual(self.events, [])

    def test_negotiation_failure_counts(self):
        """A connection that closed during negotiation counts as failed."""
        a = self.build([DirectTCPV1Hint("127.0.0.1", 1)], [])
        a.launch_direct()
        proto = self.dials[0].succeed()
        proto.connectionLost(None)
        self.assertEqual([e[0] for e in self.events],
                         ["selection.connection_failed"])
        conn = self.events[0][1]
        a.connection_failed(conn)
        self.assertEqual(self.events[-1][0], "selection.all_failed")

    def test_stop_all_except_winner(self):
        """The winner is kept and gets a record pipe; pending dials are
        cancelled, other connections hang up, listening stops."""
        a = self.build([DirectTCPV1Hint("127.0.0.1", 1), DirectTCPV1Hint("127.0.0.1", 2),
                        DirectTCPV1Hint("127.0.0.1", 3)], [])
        a.launch_direct()
        self.clock.advance(DIAL_STAGGER)
        self.clock.advance(DIAL_STAGGER)
        p1 = self.dials[0].succeed()
        p2 = self.dials[1].succeed()
        p1.dataReceived(_codec.receiver_handshake(KEY))
        winner = self.events[-1][1]
        a.stop_all_except(winner)
        self.assertEqual(self.stopped, [True])
        self.assertTrue(self.dials[2].cancelled)
        self.assertFalse(self.dials[0].cancelled)
        self.assertTrue(p2.transport.disconnecting)
        self.assertFalse(p1.transport.disconnecting)
        pipe = a.make_pipe(winner)
        verifyObject(IRecordPipe, pipe)
        self.assertEqual(pipe.describe(), "->tcp:127.0.0.1:1")

    def test_thousand_hints_bounded_and_staggered(self):
        """A peer naming a thousand dead addresses gets at most
        MAX_CONCURRENT_DIALS dials at a time, started DIAL_STAGGER apart;
        a relay launched meanwhile jumps the queue of direct dials."""
        from wormhole._transit._dialing import MAX_CONCURRENT_DIALS
        hints = [DirectTCPV1Hint("10.0.0.1", p) for p in range(1, 1001)]
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 4001),))
        a = self.build(hints, [relay])
        a.launch_direct()
        self.assertEqual(len(self.dials), 1)
        for _ in range(20):
            self.clock.advance(DIAL_STAGGER)
        self.assertEqual(len(self.dials), MAX_CONCURRENT_DIALS)
        a.launch_relay()
        self.assertEqual(len(self.dials), MAX_CONCURRENT_DIALS)  # all slots busy
        self.dials[0].d.errback(ConnectionRefusedError("refused"))
        self.assertEqual(self.dials[-1].hint, relay.hints[0])
        self.assertEqual(len(self.dials), MAX_CONCURRENT_DIALS + 1)
        self.assertEqual(self.events, [])


@implementer(ITorManager)
class FakeTor:
    def __init__(self, dials):
        self.dials = dials

    def stream_via(self, host, port, tls=False):
        return FakeEndpoint(("tor", host, port), self.dials)


class TorTests(unittest.TestCase):
    def test_everything_through_tor(self):
        """With a Tor manager, direct and onion hints alike are dialed
        through tor.stream_via (File-transfer protocol, "Transit": direct
        hints may be reached by proxying through Tor)."""
        dials = []
        clock = task.Clock()
        a = Attempts(None, KEY, True, SIDE,
                     [DirectTCPV1Hint("127.0.0.1", 1), TorTCPV1Hint("x.onion", 80)], [],
                     tor=FakeTor(dials), dial_queue=DialQueue(clock, stagger=0))
        a.wire(FakeSelection([]))
        a.launch_direct()
        clock.advance(0)
        self.assertEqual([e.hint for e in dials], [("tor", "127.0.0.1", 1), ("tor", "x.onion", 80)])

    def test_private_address_over_tor_skipped(self):
        """txtorcon refuses private address literals over Tor (ValueError
        "isn't going to work over Tor"): that hint is skipped, the others
        are still dialled."""
        class PickyTor(FakeTor):
            def stream_via(self, host, port, tls=False):
                if host.startswith("10."):
                    raise ValueError(f"'{host}' isn't going to work over Tor")
                return super().stream_via(host, port, tls)
        dials, events = [], []
        clock = task.Clock()
        a = Attempts(None, KEY, True, SIDE,
                     [DirectTCPV1Hint("10.0.0.1", 1), DirectTCPV1Hint("peer.example", 2)], [],
                     tor=PickyTor(dials), dial_queue=DialQueue(clock, stagger=0))
        a.wire(FakeSelection(events))
        a.launch_direct()
        clock.advance(0)
        self.assertEqual([e.hint for e in dials], [("tor", "peer.example", 2)])
        self.assertEqual(events, [])

    def test_transit_with_tor(self):
        """A Transit with Tor never listens nor advertises addresses, says
        it can use tor-tcp-v1, and keeps the peer's onion hints."""
        from twisted.internet import reactor

        from wormhole.transit import TransitSender
        t = TransitSender("tcp:127.0.0.1:4001", reactor=reactor, tor=FakeTor([]))
        hints = self.successResultOf(t.get_connection_hints())
        self.assertEqual([h["type"] for h in hints], ["relay-v1"])
        self.assertIn({"type": "tor-tcp-v1"}, t.get_connection_abilities())
        t.add_connection_hints([{"type": "tor-tcp-v1", "hostname": "x.onion", "port": 80}])
        self.assertEqual(t._their_direct, [TorTCPV1Hint("x.onion", 80, 0.0)])
