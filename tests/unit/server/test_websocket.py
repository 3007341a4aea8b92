"""The WebSocket glue, in memory (autobahn.twisted.testing)."""

import json

from autobahn.twisted.testing import create_memory_agent, create_pumper
from autobahn.twisted.websocket import WebSocketClientProtocol, WebSocketServerProtocol
from twisted.internet.defer import inlineCallbacks
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_mailbox._interfaces import ITransportGlue
from wormhole_mailbox._limits import Limits
from wormhole_mailbox.server import build_mailbox, make_factory


class _Client(WebSocketClientProtocol):
    def onOpen(self):
        self.got = []

    def onMessage(self, payload, isBinary):
        self.got.append((json.loads(payload), isBinary))


class InMemory(unittest.TestCase):
    @inlineCallbacks
    def setUp(self):
        self.reactor = MemoryReactorClock()
        self.pumper = create_pumper()
        self.addCleanup(self.pumper.stop)
        self.mailbox = build_mailbox(self.reactor, motd="hello",
                                     limits=Limits(max_send_buffer=1000))
        factory = make_factory(self.mailbox, reactor=self.reactor)
        self.servers = []

        def server_protocol():
            proto = factory.buildProtocol(None)
            self.servers.append(proto)
            return proto
        agent = create_memory_agent(self.reactor, self.pumper,
                                    server_protocol)
        self.pumper.start()
        self.client = yield agent.open("ws://127.0.0.1:4000/v1", {},
                                       lambda: _Client())
        yield self.pumper._flush()

    def test_text_frames(self):
        """The welcome arrives as a text frame (the reference client
        asserts on text frames) with the motd and where the client came
        from (docs/server.md, "Wire differences from the reference (decided here)")."""
        verifyObject(ITransportGlue, self.servers[0])
        (msg, binary), = self.client.got
        self.assertFalse(binary)
        me = self.client.transport.getHost()
        self.assertEqual(msg["welcome"], {"motd": "hello", "your-address": {
            "ipv4": me.host, "port": me.port}})

    @inlineCallbacks
    def test_ping(self):
        """A message round trip through the glue."""
        self.client.sendMessage(b'{"type":"ping","ping":5}', True)
        yield self.pumper._flush()
        self.assertEqual([m["type"] for m, _ in self.client.got],
                         ["welcome", "ack", "pong"])

    @inlineCallbacks
    def test_octets_counted(self):
        """Our sendData (autobahn's without its debug line) still counts
        what it writes in autobahn's traffic statistics, before and after
        the opening handshake."""
        server = self.servers[0]
        stats = server.trafficStats
        self.assertGreater(stats.preopenOutgoingOctetsWireLevel, 0)
        before = stats.outgoingOctetsWireLevel
        self.client.sendMessage(b'{"type":"ping","ping":5}', True)
        yield self.pumper._flush()
        self.assertGreater(stats.outgoingOctetsWireLevel, before)

    def test_slow_reader(self):
        """Past max_send_buffer bytes of the server's own answers (acks,
        pongs) queued while the transport has paused us, the connection is
        aborted instead of buffering more."""
        server = self.servers[0]
        conn = server._conn
        server.pauseProducing()
        for i in range(8):
            conn.received(b'{"type": "ping", "ping": %d}' % i)
        self.assertFalse(server._gone)
        for i in range(8):
            conn.received(b'{"type": "ping", "ping": %d}' % i)
        self.assertTrue(server._gone)

    @inlineCallbacks
    def test_close_after_queued(self):
        """A close decided while the reader is paused (here the bind
        timeout) leaves after what was queued before it, its `error`
        included, and nothing is sent after it."""
        server = self.servers[0]
        conn = server._conn
        server.pauseProducing()
        conn.received(b'{"type": "ping", "ping": 1}')
        conn.tick(conn.opened_at + 121)  # the bind timeout is 120 s
        conn.deliver(_Msg(0))  # too late: the connection is closing
        server.resumeProducing()
        yield self.pumper._flush()
        self.assertEqual([m["type"] for m, _ in self.client.got[1:]],
                         ["ack", "pong", "error"])
        self.assertIn("no bind within", self.client.got[-1][0]["error"])
        self.assertEqual(self.client.remoteCloseCode, 1008)

    @inlineCallbacks
    def test_backlog_paced(self):
        """Mailbox messages queued while paused (any number: here 30 times
        the send buffer) are not counted as unread; they leave in order,
        behind what was queued before them, once the transport resumes."""
        server = self.servers[0]
        conn = server._conn
        server.pauseProducing()
        conn.received(b'{"type": "ping", "ping": 1}')
        for i in range(30):
            conn.deliver(_Msg(i))
        self.assertFalse(server._gone)
        server.resumeProducing()
        yield self.pumper._flush()
        got = [m for m, _ in self.client.got[1:]]
        self.assertEqual([m["type"] for m in got[:2]], ["ack", "pong"])
        self.assertEqual([m["phase"] for m in got[2:]],
                         [str(i) for i in range(30)])
        self.assertIsNone(server._queue)


class _Msg:
    def as_wire(self):
        return {"type": "message", "side": "s", "phase": str(self.i),
                "body": "00" * 20, "id": None, "server_rx": 0}

    def __init__(self, i):
        self.i = i


class Options(unittest.TestCase):
    def test_options_reach_every_connection(self):
        """The factory's WebSocket options (ours and an operator's
        --websocket-protocol-option) are in force on each connection,
        although autobahn copies none per connection (they live on the
        factory's protocol class)."""
        mailbox = build_mailbox(MemoryReactorClock(),
                                limits=Limits(max_message_size=1000))
        factory = make_factory(mailbox, reactor=MemoryReactorClock(),
                               websocket_options=[("autoPingInterval", 7),
                                                  ("failByDrop", True)])
        proto = factory.buildProtocol(None)
        proto.makeConnection(StringTransport())
        self.assertEqual(proto.autoPingInterval, 7)
        self.assertIs(proto.failByDrop, True)
        self.assertEqual(proto.maxMessagePayloadSize, 2 * 1000 + 65536)
        self.assertEqual(proto.openHandshakeTimeout,
                         mailbox.limits.handshake_timeout)
        for name in WebSocketServerProtocol.CONFIG_ATTRS:
            self.assertNotIn(name, proto.__dict__)
        # the opening handshake's timer goes with the connection
        proto.connectionLost(Failure(ConnectionDone()))
