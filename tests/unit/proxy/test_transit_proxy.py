"""Transit and Dilation behind a proxy (docs/proxy.md, "Direct hints"): without
``direct`` nothing listens, no address of ours is offered and the peer's
direct hints are dropped; relays, TCP and WebSocket, are dialled through
the proxy's endpoints, and the connection's description says so."""
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest
from zope.interface import implementer

from wormhole._interfaces import IProxy
from wormhole._transit._attempts import Attempts
from wormhole._transit._hints import DirectTCPV1Hint, RelayV1Hint, WebSocketV1Hint
from wormhole._transit._websocket import WebSocketClientEndpoint
from wormhole.transit import TransitSender


class _Endpoint:
    def __init__(self, where):
        self.where = where

    def connect(self, factory):
        from twisted.internet.defer import Deferred
        return Deferred()  # the proxy never answers: only what was dialled counts


@implementer(IProxy)
class FakeProxy:
    def __init__(self, direct=False):
        self.direct = direct
        self.asked = []

    def routes(self, host):
        return True

    def route_note(self, host):
        return " (through the proxy socks5://p:1)"

    def stream_via(self, host, port, tls=False):
        self.asked.append((host, port, tls))
        return _Endpoint((host, port, tls))


class DirectHints(unittest.TestCase):

    def test_no_listening_no_direct_hints(self):
        reactor = MemoryReactorClock()
        t = TransitSender("tcp:relay.example:4001", reactor=reactor, proxy=FakeProxy())
        hints = self.successResultOf(t.get_connection_hints())
        self.assertEqual([h["type"] for h in hints], ["relay-v1"])
        self.assertEqual(reactor.tcpServers, [])
        t.add_connection_hints([{"type": "direct-tcp-v1", "hostname": "192.0.2.1",
                                 "port": 1234, "priority": 0.0}])
        self.assertEqual(t._their_direct, [])

    def test_direct_listens_and_keeps_direct_hints(self):
        reactor = MemoryReactorClock()
        t = TransitSender("tcp:relay.example:4001", reactor=reactor,
                          proxy=FakeProxy(direct=True), listen_addresses=["127.0.0.1"])
        hints = self.successResultOf(t.get_connection_hints())
        self.assertIn("direct-tcp-v1", [h["type"] for h in hints])
        t.add_connection_hints([{"type": "direct-tcp-v1", "hostname": "192.0.2.1",
                                 "port": 1234, "priority": 0.0}])
        self.assertEqual(len(t._their_direct), 1)
        t.stop()

    def test_tor_and_proxy_exclude_each_other(self):
        with self.assertRaises(ValueError):
            TransitSender(None, reactor=MemoryReactorClock(), tor=object(), proxy=FakeProxy())


class RelayDials(unittest.TestCase):

    def test_relays_through_the_proxy(self):
        proxy = FakeProxy(direct=True)
        dialled = []

        class Queue:
            def add(self, start, urgent=False):
                dialled.append(start)

            def queued(self):
                return len(dialled)

        relays = [RelayV1Hint((DirectTCPV1Hint("relay.example", 4001, 0.0),)),
                  RelayV1Hint((WebSocketV1Hint("wss://wsrelay.example/r", 0.0),))]
        direct = DirectTCPV1Hint("192.0.2.1", 1234, 0.0)
        a = Attempts(MemoryReactorClock(), b"k" * 32, True, "0" * 16, [direct], relays,
                     proxy=proxy, dial_queue=Queue())
        a.launch_relay()
        self.assertEqual(proxy.asked, [("relay.example", 4001, False),
                                       ("wsrelay.example", 443, True)])
        self.assertEqual(len(dialled), 2)

    def test_websocket_relay_endpoint(self):
        from wormhole._transit._endpoint_choice import endpoint_for_hint
        proxy = FakeProxy()
        ep = endpoint_for_hint(MemoryReactorClock(), WebSocketV1Hint("ws://r.example:80/", 0.0),
                               proxy=proxy)
        self.assertIsInstance(ep, WebSocketClientEndpoint)
        self.assertEqual(proxy.asked, [("r.example", 80, False)])


class DilationConnector(unittest.TestCase):
    """Dilation's Connector behind a proxy: the same rules, per generation."""

    def make(self, proxy):
        from wormhole._dilation._connector import Connector

        from ..dilation.fakes import KEY, SIDE, FakeManager
        self.reactor = MemoryReactorClock()
        self.manager = FakeManager()
        relay = RelayV1Hint((DirectTCPV1Hint("relay.example", 4001, 0.0),))
        return Connector(KEY, True, SIDE, self.reactor, self.reactor, self.manager,
                         relay_hint=relay, proxy=proxy)

    def test_relays_only_through_the_proxy(self):
        from wormhole._transit._dialing import DIAL_STAGGER
        proxy = FakeProxy()
        c = self.make(proxy)
        c.start()
        self.assertEqual(self.reactor.tcpServers, [])  # nothing listens
        self.assertEqual([[h["type"] for h in hints] for hints in self.manager.hints],
                         [["relay-v1"]])
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "192.0.2.1", "port": 81},
                     {"type": "relay-v1", "hints": [
                         {"type": "websocket-v1", "url": "wss://relay2.example/"}]}])
        self.reactor.pump([DIAL_STAGGER] * 4)
        self.assertEqual(sorted(proxy.asked), [("relay.example", 4001, False),
                                               ("relay2.example", 443, True)])
        self.assertEqual(self.reactor.tcpClients, [])  # the direct hint: not dialled
        c.stop()

    def test_direct_too_with_proxy_direct(self):
        from wormhole._dilation._connector import RELAY_DELAY
        from wormhole._transit._dialing import DIAL_STAGGER
        proxy = FakeProxy(direct=True)
        c = self.make(proxy)
        c.start()
        self.assertNotEqual(self.reactor.tcpServers, [])  # listens, as without a proxy
        c.got_hints([{"type": "direct-tcp-v1", "hostname": "192.0.2.1", "port": 81}])
        self.reactor.pump([DIAL_STAGGER] * 4 + [RELAY_DELAY])
        # the direct hint outside the proxy, the relay through it
        self.assertEqual([(h, p) for h, p, *_ in self.reactor.tcpClients], [("192.0.2.1", 81)])
        self.assertEqual(proxy.asked, [("relay.example", 4001, False)])
        c.stop()
