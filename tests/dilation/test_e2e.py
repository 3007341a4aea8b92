"""End to end over loopback: two of our wormholes with our Mailbox server
(and our Transit relay) dilate, open subchannels both ways, move data, and
close (Dilation protocol). Waits on events only; every test leaves the reactor clean."""

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater

import wormhole

from ._pair import APPID, _Base
from ._proxy import CuttableProxy
from ._streams import Source, collector_factory, sink_factory


class E2E(_Base):
    @defer.inlineCallbacks
    def test_subchannels_both_ways(self):
        """Both sides dilate; each opens a subchannel to the other's
        listener; data arrives intact; a close ends both ends."""
        _w1, _w2, d1, d2 = yield self.pair()
        f1, f2 = collector_factory(), collector_factory()
        yield d1.listener_for("echo").listen(f1)
        yield d2.listener_for("echo").listen(f2)
        p1 = yield d1.connector_for("echo").connect(collector_factory())
        p2 = yield d2.connector_for("echo").connect(collector_factory())
        self.assertNotEqual(p1.transport.getPeer().scid % 2, p2.transport.getPeer().scid % 2)
        p1.transport.write(b"one to two")
        p2.transport.write(b"two to one")
        p1.transport.loseConnection()
        p2.transport.loseConnection()
        self.assertEqual((yield f2.lost), b"one to two")
        self.assertEqual((yield f1.lost), b"two to one")

    @defer.inlineCallbacks
    def test_200mb_sha256(self):
        """200 MB over one subchannel, written by a streaming producer,
        arrive complete and in order (length and sha256), then close."""
        _w1, _w2, d1, d2 = yield self.pair()
        total = 200 * 1000 * 1000
        f2 = sink_factory()
        yield d2.listener_for("bulk").listen(f2)
        p1 = yield d1.connector_for("bulk").connect(collector_factory())
        src = Source(p1.transport, total)
        src.start()
        n, digest = yield f2.lost
        self.assertEqual(n, total)
        self.assertEqual(digest, src.h.hexdigest())

    @defer.inlineCallbacks
    def test_status_and_close(self):
        """status_update gets DilationStatus values (mailbox status inside)
        up to a connected peer; closing the wormhole ends open subchannels."""
        statuses = []
        w1, _w2, d1, d2 = yield self.pair(status_update=statuses.append)
        f2 = collector_factory()
        yield d2.listener_for("s").listen(f2)
        f1 = collector_factory()
        p1 = yield d1.connector_for("s").connect(f1)
        p1.transport.write(b"x")
        yield f2.made_d
        for _ in range(100):
            if any(type(s.peer_connection).__name__ == "ConnectedPeer" for s in statuses):
                break
            yield deferLater(reactor, 0.02, lambda: None)
        # both wormholes report to the same callback here
        kinds = [type(s.peer_connection).__name__ for s in statuses]
        self.assertEqual(kinds[:2], ["NoPeer", "NoPeer"])
        self.assertIn("ConnectedPeer", kinds)
        self.assertLess(kinds.index("ConnectingPeer"), kinds.index("ConnectedPeer"))
        connected = statuses[kinds.index("ConnectedPeer")]
        self.assertEqual(type(connected.mailbox).__name__, "WormholeStatus")
        self.assertEqual(connected.generation, 1)
        yield w1.close()
        self.assertEqual((yield f1.lost), b"")  # ended by close(), no CLOSE handshake
        from wormhole._dilation._subchannel import AlreadyClosedError
        self.assertRaises(AlreadyClosedError, p1.transport.write, b"after close")

    @defer.inlineCallbacks
    def test_old_peer(self):
        """A peer created without dilation: connect() fails with
        OldPeerCannotDilateError; dilate() without dilation=True raises."""
        from wormhole._dilation.manager import OldPeerCannotDilateError
        w1 = wormhole.create(APPID, self.srv.url, reactor, dilation=True)
        w2 = wormhole.create(APPID, self.srv.url, reactor)
        self.close_later(w1, w2)
        self.assertRaises(ValueError, w2.dilate)
        w1.allocate_code()
        w2.set_code((yield w1.get_code()))
        d1 = w1.dilate(_listen_addresses=["127.0.0.1"])
        yield self.assertFailure(d1.connector_for("x").connect(collector_factory()),
                                 OldPeerCannotDilateError)

    @defer.inlineCallbacks
    def test_writes_before_connection(self):
        """Large writes made as soon as connect() fires are queued and
        delivered (connect() waits for the first L3, as in the reference
        0.24, so these are the earliest writes an application can make)."""
        _w1, _w2, d1, d2 = yield self.pair()
        f2 = collector_factory()
        yield d2.listener_for("early").listen(f2)
        p1 = yield d1.connector_for("early").connect(collector_factory())
        blob = bytes(range(256)) * 4096 * 3  # 3 MiB: several Noise messages per record
        p1.transport.write(blob)
        p1.transport.loseConnection()
        self.assertEqual((yield f2.lost), blob)


class Relayed(_Base):
    @defer.inlineCallbacks
    def setUp(self):
        yield _Base.setUp(self)
        from wormhole_relay.testing import start_transit_relay
        self.relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(self.relay.stop)

    @defer.inlineCallbacks
    def test_relay_only(self):
        """Neither side listens: both reach each other through our relay,
        and subchannels work both ways."""
        w1, w2, d1, d2 = yield self.pair(no_listen=True,
                                         transit_relay_location=self.relay.hint)
        f2 = collector_factory()
        yield d2.listener_for("x").listen(f2)
        p1 = yield d1.connector_for("x").connect(collector_factory())
        p1.transport.write(b"via the relay")
        p1.transport.loseConnection()
        self.assertEqual((yield f2.lost), b"via the relay")
        for w in (w1, w2):
            self.assertTrue(w._dilator._manager._connection is None
                            or w._dilator._manager._connection.description.startswith("->relay"))

    @defer.inlineCallbacks
    def test_three_cuts_mid_stream(self):
        """A proxy in front of the relay cuts every connection three times
        while 24 MB stream; the Leader reconnects each time and the stream
        completes exactly once, in order (length and sha256)."""
        host, port = self.relay.hint.split(":")[1:]
        proxy = CuttableProxy(reactor, host, int(port))
        lp = reactor.listenTCP(0, proxy, interface="127.0.0.1")
        self.addCleanup(lp.stopListening)
        self.addCleanup(proxy.cut)
        hint = f"tcp:127.0.0.1:{lp.getHost().port}"
        _w1, _w2, d1, d2 = yield self.pair(no_listen=True, transit_relay_location=hint)
        total = 24 * 1000 * 1000
        marks = [total // 4, total // 2, 3 * total // 4]

        def progress(p, n):
            if marks and n >= marks[0]:
                marks.pop(0)
                reactor.callLater(0, proxy.cut)
        f2 = sink_factory(progress)
        yield d2.listener_for("bulk").listen(f2)
        p1 = yield d1.connector_for("bulk").connect(collector_factory())
        src = Source(p1.transport, total)
        src.start()
        n, digest = yield f2.lost
        self.assertEqual(proxy.cuts, 3)
        self.assertEqual(n, total)
        self.assertEqual(digest, src.h.hexdigest())


class Backpressure(_Base):
    @defer.inlineCallbacks
    def test_slow_consumer_pauses_sender(self):
        """The receiver pauses its subchannel: reading stops, the sender's
        producer is paused and has written only a bounded amount; after
        resumeProducing everything arrives."""
        _w1, _w2, d1, d2 = yield self.pair()
        total = 200 * 1000 * 1000
        state = {}

        def progress(p, n):
            if "paused_at" not in state and n >= 1000000:
                state["paused_at"] = n
                p.transport.pauseProducing()
                state["sink"] = p
            elif "paused_at" in state and "resumed" not in state:
                state["late"] = n  # nothing may arrive while paused
        f2 = sink_factory(progress)
        yield d2.listener_for("slow").listen(f2)
        p1 = yield d1.connector_for("slow").connect(collector_factory())
        src = Source(p1.transport, total)
        src.start()
        # wait until the sender stays paused (TCP buffers full end to end)
        last, stable = -1, 0
        for _ in range(500):
            yield deferLater(reactor, 0.02, lambda: None)
            if src.paused and "paused_at" in state and src.sent == last:
                stable += 1
                if stable >= 10:
                    break
            else:
                stable = 0
            last = src.sent
        self.assertTrue(src.paused, "the sender was never paused")
        self.assertGreaterEqual(stable, 10, "the sender never stopped writing")
        sent_while_paused = src.sent
        self.assertNotIn("late", state, "data was delivered while the reader was paused")
        self.assertLess(sent_while_paused, 64 * 1000 * 1000)
        state["resumed"] = True
        src.stopProducing()  # we only need to see it bounded: finish quickly
        src.total = src.sent
        src.paused = False
        state["sink"].transport.resumeProducing()
        src._pump()
        n, digest = yield f2.lost
        self.assertEqual(n, src.sent)
        self.assertEqual(digest, src.h.hexdigest())
