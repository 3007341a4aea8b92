"""Dilation through our relay over WebSocket (Transit protocol,
"WebSockets Transport"; reconnection: Dilation protocol,
"Initiating Dilation"): both sides know the relay only by its ws:// URL,
subchannels work both ways, and a stream survives the relay dropping every
connection mid-way (the Leader reconnects over WebSocket again)."""

from twisted.internet import defer, reactor

from ._pair import _Base
from ._streams import Source, collector_factory, sink_factory


class OverWebSocket(_Base):
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        yield _Base.setUp(self)
        from wormhole_relay.testing import start_transit_relay
        self.relay = yield start_transit_relay(reactor, port=0, websocket_port=0)
        self.addCleanup(self.relay.stop)

    def description(self, w):
        return w._dilator._manager._connection.description

    @defer.inlineCallbacks
    def test_subchannels_over_websocket(self):
        """A subchannel each way through the relay's WebSocket port; the L2
        connection says it is a WebSocket relay one."""
        url = self.relay.websocket_url
        w1, w2, d1, d2 = yield self.pair(no_listen=True, transit_relay_location=url)
        f1, f2 = collector_factory(), collector_factory()
        yield d1.listener_for("x").listen(f1)
        yield d2.listener_for("x").listen(f2)
        p1 = yield d1.connector_for("x").connect(collector_factory())
        p2 = yield d2.connector_for("x").connect(collector_factory())
        p1.transport.write(b"one to two")
        p2.transport.write(b"two to one")
        p1.transport.loseConnection()
        p2.transport.loseConnection()
        self.assertEqual((yield f2.lost), b"one to two")
        self.assertEqual((yield f1.lost), b"two to one")
        for w in (w1, w2):
            self.assertEqual(self.description(w), "->relay:" + url)

    @defer.inlineCallbacks
    def test_cut_and_reconnect(self):
        """The relay drops both WebSocket connections while 8 MB stream; the
        Leader reconnects over the WebSocket hint and the stream completes
        exactly once, in order (length and sha256)."""
        url = self.relay.websocket_url
        _w1, _w2, d1, d2 = yield self.pair(no_listen=True, transit_relay_location=url)
        total = 8 * 1000 * 1000
        cuts = []

        def progress(p, n):
            if not cuts and n >= total // 2:
                cuts.append(n)
                reactor.callLater(0, self.relay.relay.drop_all)
        f2 = sink_factory(progress)
        yield d2.listener_for("bulk").listen(f2)
        p1 = yield d1.connector_for("bulk").connect(collector_factory())
        src = Source(p1.transport, total)
        src.start()
        n, digest = yield f2.lost
        self.assertEqual(len(cuts), 1)
        self.assertEqual(n, total)
        self.assertEqual(digest, src.h.hexdigest())
        records = self.relay.usage()
        self.assertGreaterEqual(len(records), 1)  # the cut pair was recorded
