"""A hostile Mailbox server (and a hostile peer behind an honest one)
against our client (docs/security.md, "Mailbox client"): it
keeps dropping us, it sends JSON nested thousands of levels deep."""

import json

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet import defer, reactor
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import _key, errors
from wormhole._rendezvous import MAX_QUICK_DROPS, MAX_SERVER_MESSAGE, STABLE_AFTER
from wormhole._status import Failed, StatusTracker
from wormhole_mailbox.testing import start_mailbox_server

from ..client.common import recorded_connector
from ..client.fakes import FakeNetwork, FakeServer, server_send
from ._support import Junk, MiB

URL = "ws://127.0.0.1:4000/v1"
DEEP = b"[" * 100000 + b"]" * 100000


class HostileServer(unittest.TestCase):
    """The server end is the test: FakeNetwork hands it each connection."""

    def build(self):
        self.events = []
        self.clock = Clock()
        self.net = FakeNetwork()
        self.status = StatusTracker(None, None)
        rc = recorded_connector(URL, self.clock, self.net, self.status, self.events)
        rc.start()
        return rc

    def errors(self):
        return [e[1] for e in self.events if e[0] == "b.error"]

    def test_drops_us_after_every_welcome(self):
        """A server that welcomes us and drops us at once, every time (as
        one whose backlog for our mailbox it cannot send does): after 8
        such connections we stop with one clear error, 32.17 s after the
        start on the clock (the 1 s, x1.5 backoff in between), instead of
        reconnecting forever."""
        self.assertEqual((MAX_QUICK_DROPS, STABLE_AFTER), (8, 60.0))
        rc = self.build()
        connections = 0
        while not self.errors():
            ws = self.net.accept(rc, welcome={})
            server_send(rc, {"type": "message", "side": "s2", "phase": "0", "body": "00"})
            connections += 1
            ws.transport.loseConnection()
            calls = self.clock.getDelayedCalls()
            if calls:
                self.clock.advance(calls[0].getTime() - self.clock.seconds())
        self.assertEqual(connections, 8)
        self.assertAlmostEqual(self.clock.seconds(), 1 + 1.5 + 2.25 + 3.375 + 5.0625
                               + 7.59375 + 11.390625)
        [err] = self.errors()
        self.assertIsInstance(err, errors.ServerConnectionError)
        self.assertEqual(str(err), (
            f"could not connect to the Mailbox server at {URL}: our connection to it ended "
            "8 times in a row, each within 60 s of connecting (last: lost); giving up. It may "
            "hold more for this mailbox than it can deliver (docs/security.md)"))
        self.assertIsInstance(self.status.current.mailbox_connection, Failed)
        self.assertEqual(self.net.attempts, [])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertIn(("t.connection_failed",), self.events)

    def test_a_lasting_connection_resets_the_count(self):
        """Drops of connections that lasted 60 s or more are ordinary
        network trouble: we go on reconnecting."""
        rc = self.build()
        for _ in range(20):
            ws = self.net.accept(rc, welcome={})
            self.clock.advance(STABLE_AFTER)
            ws.transport.loseConnection()
            self.clock.advance(self.clock.getDelayedCalls()[0].getTime() - self.clock.seconds())
        self.assertEqual(self.errors(), [])
        self.assertEqual(len(self.net.attempts), 1)

    def test_nested_json_from_the_server(self):
        """A server message nested 100000 levels deep is refused before
        it is decoded (no RecursionError) and blamed on the server."""
        rc = self.build()
        self.net.accept(rc, welcome={})
        rc.ws_message(DEEP)
        [err] = self.errors()
        self.assertIsInstance(err, errors.ProtocolError)
        self.assertEqual(str(err), "the server sent something that is not a JSON object: "
                                   "JSON nested deeper than 64 levels")

    def test_nested_body_of_a_message(self):
        """Deep nesting inside a string (a message body) is no nesting."""
        rc = self.build()
        self.net.accept(rc, welcome={})
        del self.events[:]
        server_send(rc, {"type": "message", "side": "s2", "phase": "0",
                         "body": "5b" * 10000, "note": "[" * 10000})
        self.assertEqual(self.events, [("m.rx_message", "s2", "0", b"[" * 10000)])


class BeforeThePake(unittest.TestCase):
    def test_flood_before_the_pake(self):
        """The mailbox we open holds 5000 messages of the "peer" and no
        pake: we keep 1000 of them waiting for the key, then stop with a
        ProtocolError that names the limit and shows only the start of the
        message it could not take."""
        clock = Clock()
        server = FakeServer(clock)
        body = "ab" * 1000
        server.mailboxes["mb1"] = {"sides": {"s2"}, "messages": [
            {"type": "message", "side": "s2", "phase": str(i), "body": body}
            for i in range(5000)]}
        w = wormhole.create("example.com/hostile", URL, clock,
                            _endpoint_factory=server.endpoint_factory)
        versions = w.get_versions()
        w.set_code("1-purple-sausages")
        server.pump()
        f = self.failureResultOf(versions, errors.ProtocolError)
        text = str(f.value)
        self.assertTrue(text.startswith(
            "cannot handle 'message' message from the server (OrderOverflow: 1001 messages "
            "(1001000 bytes) arrived before the peer's pake; the limit is 1000 messages, "
            "33554432 bytes (docs/security.md)): {'type': 'message', 'side': 's2', "), text)
        self.assertTrue(text.endswith("... (2080 characters)"), text[-60:])
        self.assertLess(len(text), 700)
        self.assertEqual(len(w._boss._O._queue), 1000)


class HostilePeer(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def test_nested_version_message(self):
        """A peer whose encrypted version message nests 5000 levels deep:
        our client fails with ProtocolError naming the peer's version
        message, not the server, and not RecursionError."""
        srv = yield start_mailbox_server(reactor, channel_db=self.mktemp())
        self.addCleanup(srv.stop)
        # both ends send the deep version (the patch is process-wide); each
        # must blame the other
        self.patch(_key, "encode_version",
                   lambda app_versions, extra: b'{"app_versions": ' + DEEP[:5000]
                   + DEEP[-5000:] + b"}")
        w1 = wormhole.create("example.com/hostile", srv.url, reactor)
        w2 = wormhole.create("example.com/hostile", srv.url, reactor)
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        for w in (w1, w2):
            f = yield self.assertFailure(w.get_versions(), errors.ProtocolError)
            self.assertEqual(str(f), "the peer's version message is malformed: "
                                     "JSON nested deeper than 64 levels")
            yield self.assertFailure(w.close(), errors.ProtocolError)


class _HugeFrame(WebSocketServerProtocol):
    """Welcomes the client, then announces a 1 TiB text frame and pours
    junk after the header, as fast as the client takes it."""

    def onOpen(self):
        self.sendMessage(json.dumps({"type": "welcome", "welcome": {}}).encode())
        self.transport.write(b"\x81\x7f" + (2 ** 40).to_bytes(8, "big"))
        self.factory.junk = Junk(self.transport, 256 * MiB)

    def onClose(self, was_clean, code, reason):
        self.factory.junk.stopProducing()
        self.factory.closed.callback(self.factory.junk.sent)


class _Events(list):
    """The recording fakes' event list; ``error`` fires at the Boss's first error."""

    def __init__(self):
        super().__init__()
        self.error = defer.Deferred()

    def append(self, event):
        super().append(event)
        if event[0] == "b.error" and not self.error.called:
            self.error.callback(event[1])


class HugeWebSocketFrame(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_huge_frame_refused_unbuffered(self):
        """Over real loopback, a server announces a 1 TiB WebSocket frame:
        our client fails the connection as soon as the header is read
        (limit 32 MiB), so far less than the limit was ever sent to it;
        with one quick drop allowed, the error says what happened."""
        self.assertEqual(MAX_SERVER_MESSAGE, 32 * MiB)
        factory = WebSocketServerFactory()
        factory.protocol = _HugeFrame
        factory.closed = defer.Deferred()
        port = yield TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(factory)
        self.addCleanup(port.stopListening)
        url = f"ws://127.0.0.1:{port.getHost().port}/v1"
        events = _Events()
        rc = recorded_connector(url, reactor, None, StatusTracker(None, None), events,
                                max_quick_drops=1)
        rc.start()
        err = yield events.error
        sent = yield factory.closed
        print(f"hostile websocket: {sent} junk bytes sent before the close; {err}")
        self.assertLess(sent, 16 * MiB)
        self.assertIsInstance(err, errors.ServerConnectionError)
        self.assertIn("our connection to it ended 1 times in a row", str(err))
        self.assertIn("received WebSocket message size 1099511627776 exceeds payload limit "
                      "of 33554432 octets", str(err))
        rc.stop()
