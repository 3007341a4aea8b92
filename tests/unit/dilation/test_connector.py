"""L2 Connector (Dilation protocol, "Initiating Dilation", "L3 protocol"
selection): listening and advertising only allowed addresses, dialling
direct and relay hints, selecting the first proven connection and dropping
the rest."""

from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.python import log
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._connection import HANDSHAKE_TIMEOUT, DilatedConnectionProtocol
from wormhole._dilation._connector import MAX_INBOUND, RELAY_DELAY, Connector
from wormhole._transit._dialing import DIAL_STAGGER, MAX_CONCURRENT_DIALS
from wormhole._transit._hints import DirectTCPV1Hint, RelayV1Hint

from .fakes import KEY, SIDE, FakeManager


@implementer(I.IDilatedConnection)
class FakeCandidate:
    dial_key = None  # as a connection the peer dialled

    def __init__(self):
        self.selected = None
        self.disconnected = False

    def select(self, receiver):
        self.selected = receiver

    def disconnect(self):
        self.disconnected = True


class ConnectorTests(unittest.TestCase):
    def make(self, relay=None, no_listen=False, addresses=("127.0.0.1",)):
        self.reactor = MemoryReactorClock()
        self.manager = FakeManager()
        self.c = Connector(KEY, True, SIDE, self.reactor, self.reactor, self.manager,
                           relay_hint=relay, addresses=addresses, no_listen=no_listen)
        return self.c

    def test_interfaces(self):
        """The Connector provides IDilationConnector."""
        verifyObject(I.IDilationConnector, self.make())
        verifyObject(I.IDilatedConnection, FakeCandidate())

    def test_listen_and_advertise(self):
        """start() listens on each allowed address only and advertises them,
        plus the relay; our relay is dialled after the relay delay."""
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 4001, 0.0),))
        c = self.make(relay=relay, addresses=("127.0.0.1", "127.0.0.2"))
        c.start()
        self.assertEqual([s[3] for s in self.reactor.tcpServers], ["127.0.0.1", "127.0.0.2"])
        [hints] = self.manager.hints
        self.assertEqual([h["type"] for h in hints], ["direct-tcp-v1", "direct-tcp-v1", "relay-v1"])
        self.assertEqual([h["hostname"] for h in hints[:2]], ["127.0.0.1", "127.0.0.2"])
        self.assertEqual(self.reactor.tcpClients, [])
        self.reactor.advance(RELAY_DELAY)
        self.assertEqual([(h, p) for h, p, *_ in self.reactor.tcpClients], [("127.0.0.1", 4001)])
        # the dial speaks the relay handshake before Dilation's
        p = self.reactor.tcpClients[0][2].buildProtocol(None)._wrappedProtocol
        self.assertIsInstance(p, DilatedConnectionProtocol)
        self.assertTrue(p._relay_line.startswith(b"please relay "))
        self.assertTrue(p._relay_line.endswith(b" for side " + SIDE.encode() + b"\n"))

    def test_inbound_connections_bounded(self):
        """docs/security.md, "Dilation": anyone who finds our listening port opening sockets
        without end. 64 are held at once (the 65th is closed before a byte
        is read: buildProtocol gives None, one log line says so); every one
        that never completes the handshake is dropped exactly 60 s after it
        connected, and each one gone makes room for one more."""
        lines = []
        log.addObserver(lines.append)
        self.addCleanup(log.removeObserver, lines.append)
        c = self.make()
        c.start()
        factory = self.reactor.tcpServers[0][1]
        held = []
        for _i in range(MAX_INBOUND):
            p = factory.buildProtocol(None)
            p.makeConnection(StringTransport())
            held.append(p)
        self.assertEqual(MAX_INBOUND, 64)
        self.assertIsNone(factory.buildProtocol(None))
        self.assertIsNone(factory.buildProtocol(None))
        said = [e["message"][0] for e in lines if e.get("message")
                and "inbound" in e["message"][0]]
        self.assertEqual(said, ["Dilation: 64 inbound connections are open (the limit); "
                                "closing further ones at once (docs/security.md)"])
        self.reactor.advance(HANDSHAKE_TIMEOUT - 0.1)
        self.assertFalse(any(p.transport.disconnecting for p in held))
        self.reactor.advance(0.1)
        self.assertTrue(all(p.transport.disconnecting for p in held))
        held[0].connectionLost(None)
        p = factory.buildProtocol(None)
        self.assertIsInstance(p, DilatedConnectionProtocol)
        self.assertIsNone(factory.buildProtocol(None))
        for p in held[1:]:
            p.connectionLost(None)
        c.stop()

    def test_no_listen(self):
        """no_listen: no listening socket and no direct hints."""
        c = self.make(no_listen=True)
        c.start()
        self.assertEqual(self.reactor.tcpServers, [])
        self.assertEqual(self.manager.hints, [])

    def test_dial_hints_once(self):
        """Direct hints are dialled at once, each only once; relay hints
        after the delay; unusable hints are ignored."""
        c = self.make(no_listen=True)
        c.start()
        hints = [{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000},
                 {"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000},
                 {"type": "nonsense"},
                 {"type": "relay-v1", "hints": [{"hostname": "127.0.0.1", "port": 6000}]}]
        c.got_hints(hints)
        self.assertEqual([(h, p) for h, p, *_ in self.reactor.tcpClients], [("127.0.0.1", 5000)])
        self.reactor.advance(RELAY_DELAY)
        self.assertEqual([(h, p) for h, p, *_ in self.reactor.tcpClients],
                         [("127.0.0.1", 5000), ("127.0.0.1", 6000)])

    def test_literal_addresses_dialled_as_they_are(self):
        """A direct hint is dialled at once through Twisted's TCP client
        endpoint, never HostnameEndpoint, whose 0.3 s attempt delay applies
        even to an address (docs/performance.md, "Session 8: the fixed
        part"); Twisted's connectTCP takes an IPv6 address as it is."""
        c = self.make(no_listen=True)
        for host in ("127.0.0.1", "::1"):
            ep = c._tcp_endpoint(DirectTCPV1Hint(host, 5000, 0.0))
            self.assertIsInstance(ep, TCP4ClientEndpoint)
            self.assertEqual((ep._host, ep._port), (host, 5000))
        c.start()
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "::1", "port": 5001}])
        self.assertEqual([(h, p) for h, p, *_ in self.reactor.tcpClients], [("::1", 5001)])

    def test_first_candidate_wins(self):
        """The first proven connection is selected and reported; listeners
        close, pending dials and timers stop, other connections drop; a
        later candidate is dropped."""
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 4001, 0.0),))
        c = self.make(relay=relay)
        c.start()
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000}])
        dial = self.reactor.connectors[0]
        other = self.reactor.tcpServers[0][1].buildProtocol(None)
        t = StringTransport()
        other.makeConnection(t)
        winner = FakeCandidate()
        c.add_candidate(winner)
        self.assertIs(winner.selected, self.manager)
        self.assertEqual(self.manager.made, [winner])
        self.assertTrue(dial.stoppedConnecting)
        self.assertEqual(self.reactor.getDelayedCalls(), [])
        self.assertTrue(t.disconnecting)
        late = FakeCandidate()
        c.add_candidate(late)
        self.assertTrue(late.disconnected)
        self.assertFalse(winner.disconnected)

    def test_stop(self):
        """stop() before selection cancels everything."""
        c = self.make()
        c.start()
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000}])
        c.stop()
        self.assertTrue(self.reactor.connectors[0].stoppedConnecting)
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5001}])
        self.assertEqual(len(self.reactor.tcpClients), 1)
        late = FakeCandidate()
        c.add_candidate(late)
        self.assertTrue(late.disconnected)

    def test_failed_dials_retried_with_backoff(self):
        """A dial that fails, or connects and is lost before selection, is
        tried again after 1 s, then 2 s, 4 s...; never after selection."""
        from twisted.internet.error import ConnectionRefusedError
        from twisted.python.failure import Failure
        c = self.make(no_listen=True)
        c.start()
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000}])
        self.assertEqual(len(self.reactor.tcpClients), 1)
        f = self.reactor.tcpClients[0][2]
        f.clientConnectionFailed(None, Failure(ConnectionRefusedError()))
        self.reactor.advance(0.9)
        self.assertEqual(len(self.reactor.tcpClients), 1)
        self.reactor.advance(0.1)
        self.assertEqual(len(self.reactor.tcpClients), 2)
        # the second attempt connects, then drops before selection
        p = self.reactor.tcpClients[1][2].buildProtocol(None)
        p.makeConnection(StringTransport())
        p.connectionLost(Failure(ConnectionRefusedError()))
        self.reactor.advance(1.9)
        self.assertEqual(len(self.reactor.tcpClients), 2)
        self.reactor.advance(0.1)
        self.assertEqual(len(self.reactor.tcpClients), 3)
        # selected: a failure now schedules nothing
        c.add_candidate(FakeCandidate())
        self.reactor.tcpClients[2][2].clientConnectionFailed(
            None, Failure(ConnectionRefusedError()))
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_stop_cancels_retries(self):
        """stop() cancels pending retries."""
        from twisted.internet.error import ConnectionRefusedError
        from twisted.python.failure import Failure
        c = self.make(no_listen=True)
        c.start()
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000}])
        self.reactor.tcpClients[0][2].clientConnectionFailed(
            None, Failure(ConnectionRefusedError()))
        c.stop()
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_dials_bounded_and_hints_budgeted(self):
        """A peer's flood of hints is cut to the per-peer bound, and at most
        MAX_CONCURRENT_DIALS of them are dialled at a time, DIAL_STAGGER
        apart (docs/security.md, "Connection attempts")."""
        from wormhole._transit._hints import MAX_HINTS_PER_PEER
        c = self.make(no_listen=True)
        c.start()
        flood = [{"type": "direct-tcp-v1", "hostname": "10.0.0.1", "port": p}
                 for p in range(1, 1001)]
        c.got_hints(flood[:600])
        c.got_hints(flood[600:])
        self.assertEqual(len(self.reactor.tcpClients), 1)
        self.reactor.pump([DIAL_STAGGER] * 50)
        self.assertEqual(len(self.reactor.tcpClients), MAX_CONCURRENT_DIALS)
        self.assertEqual(len(c._dialled), MAX_HINTS_PER_PEER)
        c.stop()
        self.assertTrue(all(x.stoppedConnecting for x in self.reactor.connectors))
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_tor(self):
        """With Tor: nothing listens and no direct hint is advertised (only
        the relay), every hint is dialled through tor.stream_via, onion
        ones included, and a relay's WebSocket too."""
        from twisted.internet import defer
        calls = []

        class RecordingTor:
            def stream_via(self, host, port, tls=False):
                calls.append((host, port, tls))

                class Endpoint:
                    def connect(self, factory):
                        return defer.Deferred()
                return Endpoint()
        relay = RelayV1Hint((DirectTCPV1Hint("relay.example", 4001, 0.0),))
        self.reactor = MemoryReactorClock()
        self.manager = FakeManager()
        c = Connector(KEY, True, SIDE, self.reactor, self.reactor, self.manager,
                      relay_hint=relay, tor=RecordingTor())
        c.start()
        self.assertEqual(self.reactor.tcpServers, [])
        self.assertEqual([[h["type"] for h in hints] for hints in self.manager.hints],
                         [["relay-v1"]])
        c.got_hints([{"type": "tor-tcp-v1", "hostname": "abc.onion", "port": 80},
                     {"type": "direct-tcp-v1", "hostname": "peer.example", "port": 81},
                     {"type": "relay-v1", "hints": [
                         {"type": "websocket-v1", "url": "wss://relay2.example/"}]}])
        self.reactor.pump([DIAL_STAGGER] * 4 + [RELAY_DELAY])
        self.assertEqual(sorted(calls), sorted([
            ("relay.example", 4001, False), ("abc.onion", 80, False),
            ("peer.example", 81, False), ("relay2.example", 443, True)]))
        self.assertEqual(self.reactor.tcpClients, [])
        c.stop()


class LeaderPrefersDirect(unittest.TestCase):
    """Dilation protocol, "L3 protocol": the Leader may wait for a better
    connection.     A relay candidate is held (HOLD_RELAY at most) while one of our direct
    dials is still in progress."""

    def setUp(self):
        from wormhole._dilation._connector import HOLD_RELAY
        self.hold = HOLD_RELAY
        self.reactor = MemoryReactorClock()
        self.manager = FakeManager()

    def make(self, is_leader=True):
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 4001, 0.0),))
        c = Connector(KEY, is_leader, SIDE, self.reactor, self.reactor, self.manager,
                      relay_hint=relay, no_listen=True)
        c.start()  # no_listen: our relay is dialled at once
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5000}])
        self.reactor.advance(DIAL_STAGGER)  # dials start DIAL_STAGGER apart
        return c

    def candidate(self, index):
        """The protocol of the index-th dial, as a fake that has passed the
        handshake (keeps the dial key the factory gave it)."""
        p = self.reactor.tcpClients[index][2].buildProtocol(None)._wrappedProtocol
        fake = FakeCandidate()
        fake.dial_key = p.dial_key
        return fake

    def test_direct_beats_held_relay(self):
        """A relay candidate arriving first is held; the direct one that
        follows is selected and the relay one dropped."""
        c = self.make()
        relay_c, direct_c = self.candidate(0), self.candidate(1)
        self.assertEqual(relay_c.dial_key[0], "relay")
        c.add_candidate(relay_c)
        self.assertEqual(self.manager.made, [])
        c.add_candidate(direct_c)
        self.assertEqual(self.manager.made, [direct_c])
        self.assertIsNone(relay_c.selected)

    def test_relay_after_the_window(self):
        """With no direct candidate within the window, the relay one wins."""
        c = self.make()
        relay_c = self.candidate(0)
        c.add_candidate(relay_c)
        self.reactor.advance(self.hold)
        self.assertEqual(self.manager.made, [relay_c])
        self.assertIs(relay_c.selected, self.manager)
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_relay_when_direct_fails(self):
        """When the last direct dial fails, the held relay one is taken at once."""
        from twisted.internet.error import ConnectionRefusedError
        from twisted.python.failure import Failure
        c = self.make()
        relay_c = self.candidate(0)
        c.add_candidate(relay_c)
        self.reactor.tcpClients[1][2].clientConnectionFailed(
            None, Failure(ConnectionRefusedError()))
        self.assertEqual(self.manager.made, [relay_c])

    def test_held_relay_lost(self):
        """A held relay candidate that goes away is forgotten (and its dial
        retried); a later candidate is selected normally."""
        c = self.make()
        relay_c = self.candidate(0)
        c.add_candidate(relay_c)
        c.candidate_lost(relay_c)
        self.reactor.advance(self.hold)
        self.assertEqual(self.manager.made, [])
        direct_c = self.candidate(1)
        c.add_candidate(direct_c)
        self.assertEqual(self.manager.made, [direct_c])

    def test_follower_takes_relay_at_once(self):
        """The Follower never holds: the Leader already chose."""
        c = self.make(is_leader=False)
        relay_c = self.candidate(0)
        c.add_candidate(relay_c)
        self.assertEqual(self.manager.made, [relay_c])

    def test_no_direct_pending(self):
        """Without a direct dial in progress a relay candidate wins at once."""
        relay = RelayV1Hint((DirectTCPV1Hint("127.0.0.1", 4001, 0.0),))
        c = Connector(KEY, True, SIDE, self.reactor, self.reactor, self.manager,
                      relay_hint=relay, no_listen=True)
        c.start()
        relay_c = self.candidate(0)
        c.add_candidate(relay_c)
        self.assertEqual(self.manager.made, [relay_c])
