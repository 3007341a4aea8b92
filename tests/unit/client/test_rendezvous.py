"""Unit tests for the RendezvousConnector (Mailbox server protocol,
"WebSocket Transport" and "Permission to Use the Server": transport, welcome,
permissions, reconnection)."""

from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces, errors
from wormhole._hashcash import leading_zero_bits
from wormhole._rendezvous import RendezvousConnector
from wormhole._status import Closed, Connected, Connecting, Disconnected, Failed, StatusTracker
from wormhole._ws import choose_permission, parse_relay_url
from wormhole.journal import ImmediateJournal
from wormhole.timing import DebugTiming

from ...client.common import recorded_connector
from ...client.fakes import FakeNetwork, server_send

URL = "ws://127.0.0.1:4000/v1"


class RCTests(unittest.TestCase):
    def build(self):
        events = []
        self.clock = Clock()
        self.net = FakeNetwork()
        self.status = StatusTracker(None, None)
        rc = recorded_connector(URL, self.clock, self.net, self.status, events)
        return rc, events

    def test_provides_interface(self):
        """The RendezvousConnector provides IRendezvousConnector."""
        rc, _ = self.build()
        verifyObject(_interfaces.IRendezvousConnector, rc)

    def test_connect_welcome_bind(self):
        """After the welcome: the welcome goes to the Boss, bind is sent
        with appid, side and client_version, then the machines learn we are
        connected."""
        rc, events = self.build()
        self.assertEqual(self.status.current.mailbox_connection, Disconnected())
        rc.start()
        self.assertEqual(self.status.current.mailbox_connection, Connecting(URL, 0))
        self.assertEqual(self.net.calls, [("ws", "127.0.0.1", 4000)])
        ws = self.net.accept(rc)
        self.assertEqual(events, [])
        server_send(rc, {"type": "welcome", "welcome": {"motd": "hi"}, "server_tx": 1.0})
        self.assertEqual(events, [("b.rx_welcome", {"motd": "hi"}), ("n.connected",),
                                  ("m.connected",), ("l.connected",), ("a.connected",)])
        self.assertEqual(ws.types(), ["bind"])
        self.assertEqual(self.status.current.mailbox_connection, Connected(URL))
        bind = ws.sent[0]
        self.assertEqual((bind["appid"], bind["side"], bind["client_version"]),
                         ("appid", "side1", ["python", "0.1.0"]))
        self.assertIsInstance(bind["id"], str)

    def test_outbound_messages(self):
        """tx_* send the Mailbox server protocol's commands, bodies hex-encoded."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={})
        rc.tx_claim("4")
        rc.tx_open("mb")
        rc.tx_add("pake", b"\x01\xff")
        rc.tx_release("4")
        rc.tx_close("mb", "happy")
        rc.tx_allocate()
        rc.tx_list()
        got = [{k: v for k, v in m.items() if k != "id"} for m in ws.sent[1:]]
        self.assertEqual(got, [
            {"type": "claim", "nameplate": "4"},
            {"type": "open", "mailbox": "mb"},
            {"type": "add", "phase": "pake", "body": "01ff"},
            {"type": "release", "nameplate": "4"},
            {"type": "close", "mailbox": "mb", "mood": "happy"},
            {"type": "allocate"},
            {"type": "list"},
        ])

    def test_inbound_routing(self):
        """Server messages go to the machine that handles them; ack, pong
        and unknown types are ignored."""
        rc, events = self.build()
        rc.start()
        self.net.accept(rc, welcome={})
        del events[:]
        for msg in [{"type": "ack", "id": "1"}, {"type": "pong", "pong": 1},
                    {"type": "future-thing", "x": 1},
                    {"type": "nameplates", "nameplates": [{"id": "1"}, {"id": "2", "x": 0}]},
                    {"type": "allocated", "nameplate": "3"},
                    {"type": "claimed", "mailbox": "mb", "extra": True},
                    {"type": "released"},
                    {"type": "message", "side": "s2", "phase": "pake", "body": "0102"},
                    {"type": "closed"},
                    {"type": "error", "error": "bad", "orig": {"type": "claim"}}]:
            server_send(rc, msg)
        self.assertEqual(events, [("l.rx_nameplates", ["1", "2"]), ("a.rx_allocated", "3"),
                                  ("n.rx_claimed", "mb"), ("n.rx_released",),
                                  ("m.rx_message", "s2", "pake", b"\x01\x02"),
                                  ("m.rx_closed",), ("b.rx_error", "bad", {"type": "claim"})])

    def test_error_answers_release_and_close(self):
        """An error answering our release or close also ends that step
        (else close() could wait forever for released/closed)."""
        rc, events = self.build()
        rc.start()
        self.net.accept(rc, welcome={})
        del events[:]
        server_send(rc, {"type": "error", "error": "crowded",
                         "orig": {"type": "release", "nameplate": "1"}})
        server_send(rc, {"type": "error", "error": "crowded",
                         "orig": {"type": "close", "mailbox": "mb"}})
        server_send(rc, {"type": "error", "error": "huh", "orig": "not a dict"})
        self.assertEqual(events, [
            ("b.rx_error", "crowded", {"type": "release", "nameplate": "1"}),
            ("n.rx_released",),
            ("b.rx_error", "crowded", {"type": "close", "mailbox": "mb"}),
            ("m.rx_closed",),
            ("b.rx_error", "huh", "not a dict")])

    def test_malformed(self):
        """A malformed message is a clear ProtocolError to the Boss."""
        rc, events = self.build()
        rc.start()
        self.net.accept(rc, welcome={})
        del events[:]
        server_send(rc, {"type": "claimed", "mailbox": 7})
        rc.ws_message(b"not json")
        self.assertEqual([e[0] for e in events], ["b.error", "b.error"])
        for e in events:
            self.assertIsInstance(e[1], errors.ProtocolError)
        self.assertIn("'claimed'", str(events[0][1]))

    def test_welcome_error(self):
        """A welcome with error is a WelcomeError, and no bind is sent."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={"error": "go away"})
        self.assertEqual(len(events), 2)
        self.assertEqual(events[0][0], "b.rx_unwelcome")
        self.assertIsInstance(events[0][1], errors.WelcomeError)
        self.assertEqual(str(events[0][1]), "go away")
        # the server will not serve us: no bind, no reconnection
        self.assertEqual(events[1], ("t.connection_failed",))
        self.assertEqual(ws.sent, [])
        self.assertTrue(ws.transport.lost)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        rc.stop()
        self.assertEqual(events[2:], [("t.stopped",)])

    def test_permission_none(self):
        """With 'none' offered nothing extra is sent before bind."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={"permission-required": {
            "none": {}, "hashcash": {"bits": 6, "resource": "r"}}})
        self.assertEqual(ws.types(), ["bind"])

    def test_permission_hashcash(self):
        """With only hashcash offered a stamp is submitted before bind."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={"permission-required": {
            "hashcash": {"bits": 6, "resource": "res"}, "future": {}}})
        self.assertEqual(ws.types(), ["submit-permissions", "bind"])
        perm = ws.sent[0]
        self.assertEqual(perm["method"], "hashcash")
        fields = perm["stamp"].split(":")
        self.assertEqual((fields[0], fields[1], fields[3]), ("1", "6", "res"))
        import hashlib
        digest = hashlib.sha1(perm["stamp"].encode("ascii")).digest()
        self.assertGreaterEqual(leading_zero_bits(digest), 6)

    def test_permission_hashcash_minted_later(self):
        """The stamp is minted off the reactor: nothing is sent until it is
        ready; a stamp for a connection that was lost is thrown away."""
        from twisted.internet.defer import Deferred
        pending = []

        def mint_f(resource, bits):
            d = Deferred()
            pending.append((resource, bits, d))
            return d
        rc, events = self.build()
        rc._mint_f = mint_f
        rc.start()
        welcome = {"permission-required": {"hashcash": {"bits": 6, "resource": "r1"}}}
        ws = self.net.accept(rc, welcome=welcome)
        self.assertEqual(events, [("b.rx_welcome", welcome)])
        self.assertEqual(ws.sent, [])
        ws.transport.loseConnection()  # lost while minting
        pending.pop(0)[2].callback("STALE")
        self.assertEqual(ws.sent, [])
        self.clock.advance(1)
        ws2 = self.net.accept(rc, welcome={"permission-required": {
            "hashcash": {"bits": 6, "resource": "r2"}}})
        resource, bits, d = pending.pop(0)
        self.assertEqual((resource, bits), ("r2", 6))
        d.callback("STAMP")
        self.assertEqual(ws2.types(), ["submit-permissions", "bind"])
        self.assertEqual(ws2.sent[0]["stamp"], "STAMP")
        self.assertIn(("n.connected",), events)

    def test_permission_too_expensive(self):
        """A server asking for an absurd stamp is refused with WelcomeError."""
        e = self.assertRaises(errors.WelcomeError, choose_permission,
                              {"permission-required": {"hashcash": {"bits": 60,
                                                                    "resource": "r"}}})
        self.assertIn("60", str(e))

    def test_permission_unsupported(self):
        """No method we know: a WelcomeError naming the offered methods."""
        self.assertRaises(errors.WelcomeError, choose_permission,
                          {"permission-required": {"captcha": {}}})
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={"permission-required": {"captcha": {}}})
        self.assertEqual(events[0][0], "b.rx_unwelcome")
        self.assertIn("captcha", str(events[0][1]))
        self.assertEqual(ws.sent, [])

    def test_first_connection_fails(self):
        """If the very first connection fails, the Boss gets a
        ServerConnectionError, and stop() then completes at once."""
        rc, events = self.build()
        rc.start()
        self.net.attempts.pop(0).errback(Failure(ConnectionRefusedError()))
        self.assertEqual(events[0][0], "b.error")
        self.assertIsInstance(events[0][1], errors.ServerConnectionError)
        self.assertIn(URL, str(events[0][1]))
        self.assertEqual(events[1:], [("t.connection_failed",)])
        self.assertIsInstance(self.status.current.mailbox_connection, Failed)
        rc.stop()
        self.assertEqual(events[2:], [("t.stopped",)])
        self.assertEqual(self.status.current.mailbox_connection, Closed())
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_reconnect_backoff(self):
        """After losing an established connection the machines learn it,
        and we retry after 1 s, 1.5 s, 2.25 s ... capped at 60 s; a
        connection that lasted 60 s resets the delay (one dropped sooner
        does not: docs/security.md "Mailbox client")."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={})
        del events[:]
        ws.transport.loseConnection()
        self.assertEqual(events, [("n.lost",), ("m.lost",), ("l.lost",), ("a.lost",)])
        self.assertEqual(self.status.current.mailbox_connection, Disconnected())
        delays = []
        for _i in range(12):
            (call,) = self.clock.getDelayedCalls()
            delays.append(call.getTime() - self.clock.seconds())
            self.clock.advance(delays[-1])
            self.net.attempts.pop(0).errback(Failure(ConnectionRefusedError()))
        self.assertEqual(delays[:4], [1.0, 1.5, 2.25, 3.375])
        self.assertEqual(delays[-1], 60.0)
        (call,) = self.clock.getDelayedCalls()
        self.clock.advance(60)
        ws = self.net.accept(rc, welcome={})
        self.assertIn(("n.connected",), events)
        self.clock.advance(60)
        ws.transport.loseConnection()
        (call,) = self.clock.getDelayedCalls()
        self.assertEqual(call.getTime() - self.clock.seconds(), 1.0)
        rc.stop()
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(events[-1], ("t.stopped",))

    def test_stop_connected(self):
        """stop() while connected drops the connection, then says stopped."""
        rc, events = self.build()
        rc.start()
        ws = self.net.accept(rc, welcome={})
        del events[:]
        rc.stop()
        self.assertTrue(ws.transport.lost)
        self.assertEqual(events, [("t.stopped",)])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_stop_while_connecting(self):
        """stop() during the first connection attempt cancels it."""
        rc, events = self.build()
        rc.start()
        rc.stop()
        self.assertEqual(events, [("t.stopped",)])

    def test_stop_before_start(self):
        """stop() before start() is done at once."""
        rc, events = self.build()
        rc.stop()
        self.assertEqual(events, [("t.stopped",)])


class RelayURLTests(unittest.TestCase):
    def test_good(self):
        """ws:// and wss:// URLs parse, with default ports."""
        self.assertEqual(parse_relay_url("ws://example.org:4000/v1"), ("ws", "example.org", 4000))
        self.assertEqual(parse_relay_url("ws://example.org/v1"), ("ws", "example.org", 80))
        self.assertEqual(parse_relay_url("wss://example.org/v1"), ("wss", "example.org", 443))

    def test_bad(self):
        """Other schemes, missing hosts, bad ports: RelayURLError (a ValueError)."""
        for url in ["http://example.org/v1", "example.org:4000", "ws:///v1", "ws://h:notaport/",
                    "", b"ws://h/"]:
            e = self.assertRaises(errors.RelayURLError, parse_relay_url, url)
            self.assertIsInstance(e, ValueError)


class EndpointTests(unittest.TestCase):
    def make(self, url, tor=None):
        from wormhole._status import StatusTracker
        return RendezvousConnector(url, "appid", "side1", Clock(), ImmediateJournal(), tor,
                                   DebugTiming(), ("python", "0"), StatusTracker(None, None))

    def test_plain(self):
        """ws:// to a host name connects with a HostnameEndpoint to the
        URL's host and port; to an address, with the TCP endpoint of its
        family (no resolution on a thread, and a refused connection is
        reported at once, not 0.3 s later)."""
        from twisted.internet.endpoints import (
            HostnameEndpoint,
            TCP4ClientEndpoint,
            TCP6ClientEndpoint,
        )
        rc = self.make("ws://example.org:4000/v1")
        for host, kind in (("example.org", HostnameEndpoint),
                           ("127.0.0.1", TCP4ClientEndpoint), ("::1", TCP6ClientEndpoint)):
            ep = rc._make_endpoint("ws", host, 4000)
            self.assertIsInstance(ep, kind)
            self.assertEqual((ep._port, ep._bindAddress), (4000, None))
        self.assertEqual(rc._make_endpoint("ws", "127.0.0.1", 4000)._host, "127.0.0.1")

    def test_tls(self):
        """wss:// wraps the connection in TLS for the URL's host."""
        from twisted.internet.endpoints import HostnameEndpoint
        rc = self.make("wss://example.org/v1")
        ep = rc._make_endpoint("wss", "example.org", 443)
        self.assertNotIsInstance(ep, HostnameEndpoint)
        self.assertIsInstance(ep._wrappedEndpoint, HostnameEndpoint)

    def test_tor(self):
        """With a Tor manager every connection goes through stream_via."""
        from zope.interface import implementer

        calls = []

        @implementer(_interfaces.ITorManager)
        class FakeTor:
            def stream_via(self, host, port, tls=False):
                calls.append((host, port, tls))
                return "ENDPOINT"

        verifyObject(_interfaces.ITorManager, FakeTor())
        rc = self.make("wss://example.org/v1", tor=FakeTor())
        self.assertEqual(rc._make_endpoint("wss", "example.org", 443), "ENDPOINT")
        self.assertEqual(calls, [("example.org", 443, True)])
