"""WebSocket clients (``--websocket``): binary messages carry the same byte
stream as TCP, and WebSocket and TCP clients pair with each other."""

import hashlib
import os

from autobahn.twisted.websocket import WebSocketClientFactory
from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks, returnValue
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.task import deferLater
from zope.interface.verify import verifyObject

from wormhole_relay._interfaces import IRelayConnection, ITransportGlue

from ._fakes import SIDE1, SIDE2, TOKEN, handshake
from ._support import Base, WSClient


class WSBase(Base):
    @inlineCallbacks
    def setUp(self):
        yield self.start(websocket_port=0)
        self.ws_clients = []
        self.addCleanup(self._close_ws)

    @inlineCallbacks
    def _close_ws(self):
        for c in self.ws_clients:
            if not c.gone:
                c.transport.abortConnection()
        for c in self.ws_clients:
            yield c.closed

    @inlineCallbacks
    def ws_connect(self):
        f = WebSocketClientFactory(self.r.websocket_url, reactor=reactor)
        f.protocol = WSClient
        f.opened = Deferred()
        ep = TCP4ClientEndpoint(reactor, "127.0.0.1", self.r.websocket_port)
        proto = yield ep.connect(f)
        self.ws_clients.append(proto)
        yield f.opened
        returnValue(proto)


class WebSocket(WSBase):
    def test_close_handshake_timeout(self):
        """autobahn's closing handshake timeout is the relay's
        close_timeout, not its 1 s default (which txaio's batched timer can
        fire after a few ms, aborting before the client read our last
        bytes)."""
        from twisted.internet.task import Clock

        from wormhole_relay._limits import Limits
        from wormhole_relay.server import build_relay, make_websocket_factory
        f = make_websocket_factory(build_relay(Clock()), "ws://127.0.0.1:1/")
        self.assertEqual(f.closeHandshakeTimeout, Limits().close_timeout)
        f = make_websocket_factory(
            build_relay(Clock(), limits=Limits(close_timeout=5.0)),
            "ws://127.0.0.1:1/")
        self.assertEqual(f.closeHandshakeTimeout, 5.0)

    def test_url(self):
        """websocket_port=0 gives a ws:// URL on 127.0.0.1 with the port."""
        self.assertEqual(self.r.websocket_url,
                         f"ws://127.0.0.1:{self.r.websocket_port}/")

    @inlineCallbacks
    def test_two_websocket_clients(self):
        """Two WebSocket clients pair and relay both ways."""
        a = yield self.ws_connect()
        b = yield self.ws_connect()
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        self.assertEqual((yield a.when_received(3)), b"ok\n")
        self.assertEqual((yield b.when_received(3)), b"ok\n")
        yield self.check_relays(a, b)
        for c in self.r.relay.connections():
            verifyObject(IRelayConnection, c)
            verifyObject(ITransportGlue, c.glue)

    @inlineCallbacks
    def test_websocket_with_tcp(self):
        """A WebSocket client and a TCP client pair; a megabyte each way
        arrives whole (sha256)."""
        a = yield self.ws_connect()
        b = yield self.clients.connect(self.r.port)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        a.keep = b.keep = False
        size = 1024 * 1024
        ab, ba = os.urandom(size), os.urandom(size)
        for i in range(0, size, 65536):
            a.send(ab[i:i + 65536])
        b.send(ba)
        yield b.when_received(3 + size)
        yield a.when_received(3 + size)
        self.assertEqual(b.sha.hexdigest(),
                         hashlib.sha256(b"ok\n" + ab).hexdigest())
        self.assertEqual(a.sha.hexdigest(),
                         hashlib.sha256(b"ok\n" + ba).hexdigest())

    @inlineCallbacks
    def test_handshake_split_over_messages(self):
        """Message boundaries mean nothing: a handshake in three binary
        messages pairs."""
        a = yield self.ws_connect()
        b = yield self.clients.connect(self.r.port)
        line = handshake(TOKEN, SIDE1)
        a.send(line[:5])
        a.send(line[5:50])
        a.send(line[50:])
        b.send(handshake(TOKEN, SIDE2))
        self.assertEqual((yield a.when_received(3)), b"ok\n")
        yield b.when_received(3)
        yield self.check_relays(a, b)

    @inlineCallbacks
    def test_bad_handshake(self):
        """A bad handshake over WebSocket: 'bad handshake\\n' in a binary
        message, then a clean close."""
        a = yield self.ws_connect()
        a.send(b"hello\n")
        got, code = yield a.closed
        self.assertEqual(got, b"bad handshake\n")
        self.assertEqual(code, 1000)
        yield self.r.when_mood("errory")

    @inlineCallbacks
    def test_text_message_refused(self):
        """A text message is refused with close code 1003 (RFC 6455
        "cannot accept this type of data")."""
        a = yield self.ws_connect()
        a.sendMessage(handshake(TOKEN, SIDE1), isBinary=False)
        got, code = yield a.closed
        self.assertEqual((got, code), (b"", 1003))

    @inlineCallbacks
    def test_tcp_partner_closing_closes_websocket(self):
        """When the TCP side goes, the WebSocket side gets what was sent
        and a clean close; one happy record."""
        a = yield self.ws_connect()
        b = yield self.clients.connect(self.r.port)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        b.send(b"bye")
        b.transport.loseConnection()
        got, code = yield a.closed
        self.assertEqual((got, code), (b"ok\nbye", 1000))
        records = yield self.r.when_usage(1)
        self.assertEqual([r["mood"] for r in records], ["happy"])

    @inlineCallbacks
    def test_websocket_partner_closing_closes_tcp(self):
        """When the WebSocket side closes, the TCP side is closed."""
        a = yield self.ws_connect()
        b = yield self.clients.connect(self.r.port)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        a.send(b"bye")
        a.sendClose(1000)
        got = yield b.closed
        self.assertEqual(got, b"ok\nbye")


def _relay_held(relay):
    """Bytes the relay holds for all its connections: Twisted's write
    buffers plus autobahn's unparsed input."""
    total = 0
    for c in relay.connections():
        t = c.glue.transport
        total += len(t.dataBuffer) - t.offset + t._tempDataLen
        total += len(getattr(c.glue, "data", b"") or b"")
    return total


class WebSocketBackpressure(WSBase):
    @inlineCallbacks
    def ws_tcp_pair(self):
        a = yield self.ws_connect()
        b = yield self.clients.connect(self.r.port)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        return a, b

    @inlineCallbacks
    def test_one_huge_message_to_slow_reader(self):
        """A WebSocket client sends 32 MiB in one binary message to a TCP
        client that does not read: the relay hands the frame on piece by
        piece and stops reading, so it never holds more than a few
        socket buffers; once the reader reads, all of it arrives."""
        a, b = yield self.ws_tcp_pair()
        b.keep = False
        b.transport.pauseProducing()
        data = os.urandom(32 * 1024 * 1024)
        a.sendMessage(data, isBinary=True)
        held = 0
        for _ in range(100):
            yield deferLater(reactor, 0.01, lambda: None)
            held = max(held, _relay_held(self.r.relay))
        self.assertLess(held, 4 * 1024 * 1024)
        b.transport.resumeProducing()
        yield b.when_received(3 + len(data))
        self.assertEqual(b.sha.hexdigest(),
                         hashlib.sha256(b"ok\n" + data).hexdigest())

    @inlineCallbacks
    def test_slow_websocket_reader(self):
        """A TCP client floods a WebSocket client that does not read: the
        relay stops reading from the TCP client, which is paused by its own
        transport before it has sent everything."""
        from ._support import _Flood
        a, b = yield self.ws_tcp_pair()
        a.keep = False
        a.transport.pauseProducing()
        limit = 64 * 1024 * 1024
        flood = _Flood(b.transport, limit,
                       lambda: _relay_held(self.r.relay))
        yield flood.paused
        self.assertLess(flood.sent, limit)
        self.assertLess(flood.max_seen, 4 * 1024 * 1024)
        flood.stop()
        a.transport.resumeProducing()
        yield a.when_received(3 + flood.sent)
        self.assertEqual(a.sha.hexdigest(), flood.sha.hexdigest())

    @inlineCallbacks
    def test_paused_websocket_closes_when_partner_goes(self):
        """The relay stopped reading a WebSocket client because its TCP
        partner does not read; when the partner resets, the WebSocket
        client still gets a clean close at once (the relay reads its
        close frame) and the pair's record is written, instead of waiting
        for the close timer."""
        a, b = yield self.ws_tcp_pair()
        b.keep = False
        b.transport.pauseProducing()
        chunk = os.urandom(1024 * 1024)
        for _ in range(32):
            a.send(chunk)
        for _ in range(100):
            yield deferLater(reactor, 0.01, lambda: None)
        b.transport.abortConnection()
        _, code = yield a.closed
        self.assertEqual(code, 1000)
        records = yield self.r.when_usage(1)
        self.assertEqual([r["mood"] for r in records], ["happy"])
