"""Our TransitSender and TransitReceiver over loopback (127.0.0.1 only)."""

import hashlib
import io
import os

from twisted.internet import defer, error, interfaces, protocol, reactor
from twisted.protocols.basic import FileSender
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole.transit import IRecordPipe, TransitError, TransitReceiver, TransitSender

from ._support import LOOPBACK, HashingConsumer, start_relay


@defer.inlineCallbacks
def pair(testcase, relay=None, no_listen=(False, False), key=(b"k" * 32, b"k" * 32),
         **kwargs):
    s = TransitSender(relay, no_listen=no_listen[0], reactor=reactor,
                      listen_addresses=LOOPBACK, **kwargs)
    r = TransitReceiver(relay, no_listen=no_listen[1], reactor=reactor,
                        listen_addresses=LOOPBACK, **kwargs)
    hs = yield s.get_connection_hints()
    hr = yield r.get_connection_hints()
    s.add_connection_hints(hr)
    r.add_connection_hints(hs)
    s.set_transit_key(key[0])
    r.set_transit_key(key[1])
    return s, r


@defer.inlineCallbacks
def connected(testcase, **kwargs):
    s, r = yield pair(testcase, **kwargs)
    ps, pr = yield defer.gatherResults([s.connect(), r.connect()])
    testcase.addCleanup(ps.close)
    testcase.addCleanup(pr.close)
    return ps, pr


class EndToEnd(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def test_direct(self):
        """Both listen on 127.0.0.1; they connect directly and trade records
        both ways; the pipe provides IRecordPipe, IConsumer, IPushProducer."""
        ps, pr = yield connected(self)
        for p in (ps, pr):
            verifyObject(IRecordPipe, p)
            verifyObject(interfaces.IConsumer, p)
            verifyObject(interfaces.IPushProducer, p)
        self.assertIn("tcp:127.0.0.1:", ps.describe())
        ps.send_record(b"my first record")
        pr.send_record(b"Greatest Hits")
        self.assertEqual((yield pr.receive_record()), b"my first record")
        self.assertEqual((yield ps.receive_record()), b"Greatest Hits")

    @defer.inlineCallbacks
    def test_timing(self):
        """With timing=, connect() records a finished 'transit connect'
        event (for --dump-timing)."""
        from wormhole.timing import DebugTiming
        timing = DebugTiming()
        yield connected(self, timing=timing)
        events = [e for e in timing.events() if e["name"] == "transit connect"]
        self.assertEqual(len(events), 2)
        for e in events:
            self.assertIsNotNone(e["stop"])

    @defer.inlineCallbacks
    def test_hints_only_loopback(self):
        """With listen_addresses=["127.0.0.1"], the only direct hint is
        127.0.0.1, and our relay comes after it."""
        s = TransitSender("tcp:127.0.0.1:4001", reactor=reactor, listen_addresses=LOOPBACK)
        hints = yield s.get_connection_hints()
        self.addCleanup(s.stop)
        self.assertEqual([h["type"] for h in hints], ["direct-tcp-v1", "relay-v1"])
        self.assertEqual(hints[0]["hostname"], "127.0.0.1")
        again = yield s.get_connection_hints()
        self.assertEqual(again, hints)
        self.assertEqual(s.get_connection_abilities(),
                         [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}])

    @defer.inlineCallbacks
    def test_environment_restricts(self):
        """WORMHOLE_TRANSIT_ADDRESSES restricts the listener like the argument."""
        self.patch(os, "environ", dict(os.environ, WORMHOLE_TRANSIT_ADDRESSES="127.0.0.1"))
        s = TransitSender(None, reactor=reactor)
        hints = yield s.get_connection_hints()
        self.addCleanup(s.stop)
        self.assertEqual([h["hostname"] for h in hints], ["127.0.0.1"])

    @defer.inlineCallbacks
    def test_relay_only(self):
        """Nobody listens (no_listen on both): they meet on the relay."""
        relay = yield start_relay(self)
        ps, pr = yield connected(self, relay=relay, no_listen=(True, True))
        self.assertTrue(ps.describe().startswith("->relay:"), ps.describe())
        ps.send_record(b"via relay")
        self.assertEqual((yield pr.receive_record()), b"via relay")
        pr.send_record(b"and back")
        self.assertEqual((yield ps.receive_record()), b"and back")

    @defer.inlineCallbacks
    def test_relay_after_dead_direct_hint(self):
        """A direct hint that refuses does not stop the relay from being
        tried after the (short, configured) relay delay."""
        relay = yield start_relay(self)
        s, r = yield pair(self, relay=relay, no_listen=(True, True), relay_delay=0.05)
        dead = yield reactor.listenTCP(0, protocol.Factory(), interface="127.0.0.1")
        port = dead.getHost().port
        yield dead.stopListening()
        s.add_connection_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": port}])
        ps, pr = yield defer.gatherResults([s.connect(), r.connect()])
        self.addCleanup(ps.close)
        self.addCleanup(pr.close)
        self.assertTrue(ps.describe().startswith("->relay:"), ps.describe())
        ps.send_record(b"x")
        self.assertEqual((yield pr.receive_record()), b"x")

    @defer.inlineCallbacks
    def test_fifty_megabytes_producer_consumer(self):
        """50 MB from a FileSender (a pull producer registered with the
        pipe) arrive in a consumer that keeps pausing us, sha256 equal."""
        data = os.urandom(50 * 1000 * 1000)
        ps, pr = yield connected(self)
        consumer = HashingConsumer()
        done = pr.connectConsumer(consumer, expected=len(data))
        yield FileSender().beginFileTransfer(io.BytesIO(data), ps)
        got = yield done
        self.assertIs(got, consumer)
        self.assertEqual(consumer.count, len(data))
        self.assertEqual(consumer.hash.hexdigest(), hashlib.sha256(data).hexdigest())
        self.assertGreater(consumer.pauses, 10)
        # the pipe still carries records after the consumer is done
        pr.send_record(b"ack")
        self.assertEqual((yield ps.receive_record()), b"ack")

    @defer.inlineCallbacks
    def test_close_flushes(self):
        """Records sent just before close() all arrive, then the peer sees
        the connection closed."""
        ps, pr = yield connected(self)
        records = [os.urandom(100000) for _ in range(30)]
        for r in records:
            ps.send_record(r)
        closed = ps.close()
        for r in records:
            self.assertEqual((yield pr.receive_record()), r)
        yield closed
        yield self.assertFailure(pr.receive_record(), error.ConnectionClosed)
        self.assertRaises(ConnectionError, ps.send_record, b"too late")

    @defer.inlineCallbacks
    def test_wrong_key(self):
        """Different keys: the receiver's only attempt is refused at the
        handshake, so its connect() fails at once; the listening sender
        gives up at its timeout."""
        s, r = yield pair(self, key=(b"k" * 32, b"x" * 32), connect_timeout=2.0)
        # only the receiver dials: the sender has no hint of the receiver's
        s._their_direct = []
        r_connect, s_connect = r.connect(), s.connect()
        yield self.assertFailure(r_connect, TransitError)
        yield self.assertFailure(s_connect, TransitError)

    @defer.inlineCallbacks
    def test_connect_timeout(self):
        """A hint that accepts but never speaks: connect() fails with
        TransitError after connect_timeout."""
        silent = yield reactor.listenTCP(0, protocol.Factory.forProtocol(protocol.Protocol),
                                         interface="127.0.0.1")
        self.addCleanup(silent.stopListening)
        s = TransitSender(None, no_listen=True, reactor=reactor, connect_timeout=0.5)
        s.add_connection_hints([{"type": "direct-tcp-v1", "hostname": "127.0.0.1",
                                 "port": silent.getHost().port}])
        s.set_transit_key(b"k" * 32)
        f = yield self.assertFailure(s.connect(), TransitError)
        self.assertIn("0.5 seconds", str(f))

    @defer.inlineCallbacks
    def test_nothing_to_try(self):
        """No hints, no relay, not listening: connect() fails at once."""
        s = TransitReceiver(None, no_listen=True, reactor=reactor)
        s.set_transit_key(b"k" * 32)
        yield self.assertFailure(s.connect(), TransitError)

    @defer.inlineCallbacks
    def test_stop(self):
        """stop() fails a running connect() with CancelledError and closes
        the listener, so the port refuses connections afterwards."""
        s = TransitSender(None, reactor=reactor, listen_addresses=LOOPBACK)
        hints = yield s.get_connection_hints()
        s.set_transit_key(b"k" * 32)
        d = s.connect()
        yield s.stop()
        yield self.assertFailure(d, defer.CancelledError)
        from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
        ep = TCP4ClientEndpoint(reactor, "127.0.0.1", hints[0]["port"])
        yield self.assertFailure(connectProtocol(ep, protocol.Protocol()),
                                 error.ConnectionRefusedError)

    @defer.inlineCallbacks
    def test_stop_before_connect(self):
        """stop() before connect() closes the listener and drops a peer
        that dialed in early."""
        from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
        s = TransitReceiver(None, reactor=reactor, listen_addresses=LOOPBACK)
        hints = yield s.get_connection_hints()
        early = RawPeer(b"")
        yield connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", hints[0]["port"]), early)
        yield s.stop()
        yield early.lost

    def test_misuse(self):
        """connect() twice, a str key or a second key fail with a message
        saying what is wrong."""
        s = TransitSender(None, no_listen=True, reactor=reactor)
        self.assertRaises(TypeError, s.set_transit_key, "text")
        s.set_transit_key(b"k" * 32)
        self.assertRaises(TransitError, s.set_transit_key, b"k" * 32)
        self.failureResultOf(s.connect(), TransitError)
        f = self.failureResultOf(s.connect(), TransitError)
        self.assertIn("only be called once", str(f.value))

    def test_connect_waits_for_the_key(self):
        """connect() before set_transit_key() waits (as the reference's
        does) and starts once the key arrives; stop() cancels the wait."""
        s = TransitReceiver(None, no_listen=True, reactor=reactor)
        d = s.connect()
        self.assertNoResult(d)
        self.failureResultOf(s.connect(), TransitError)  # still only once
        s.set_transit_key(b"k" * 32)
        # nothing to try (no hints, no relay, not listening): it fails now
        self.failureResultOf(d, TransitError)
        s2 = TransitReceiver(None, no_listen=True, reactor=reactor)
        d2 = s2.connect()
        s2.stop()
        self.failureResultOf(d2, defer.CancelledError)


class RawPeer(protocol.Protocol):
    """A hand-written receiver: sends its handshake, records what it gets."""

    def __init__(self, handshake):
        self.handshake = handshake
        self.got = b""
        self.lost = defer.Deferred()
        self._waiting = []

    def connectionMade(self):
        self.transport.write(self.handshake)

    def dataReceived(self, data):
        self.got += data
        waiting, self._waiting = self._waiting, []
        for n, d in waiting:
            if len(self.got) >= n:
                d.callback(self.got[:n])
            else:
                self._waiting.append((n, d))

    def first_bytes(self, n):
        """Deferred firing with the first ``n`` bytes received."""
        if len(self.got) >= n:
            return defer.succeed(self.got[:n])
        d = defer.Deferred()
        self._waiting.append((n, d))
        return d

    def connectionLost(self, reason):
        self.lost.callback(None)


class SelectionOnTheWire(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_first_past_handshake_wins(self):
        """Two receiver connections reach our sender's listener; the one
        whose handshake completes gets go, the slow one is hung up when
        the race is decided (Transit protocol, "Handshake")."""
        from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

        from wormhole._transit import _codec
        key = b"k" * 32
        s = TransitSender(None, reactor=reactor, listen_addresses=LOOPBACK)
        hints = yield s.get_connection_hints()
        s.set_transit_key(key)
        d = s.connect()
        ep = TCP4ClientEndpoint(reactor, "127.0.0.1", hints[0]["port"])
        slow = RawPeer(_codec.receiver_handshake(key)[:-1])
        yield connectProtocol(ep, slow)
        quick = RawPeer(_codec.receiver_handshake(key))
        yield connectProtocol(ep, quick)
        pipe = yield d
        self.addCleanup(pipe.close)
        yield slow.lost
        self.assertEqual(slow.got, _codec.sender_handshake(key))
        expected = _codec.sender_handshake(key) + b"go\n"
        self.assertEqual((yield quick.first_bytes(len(expected))), expected)

    @defer.inlineCallbacks
    def test_early_inbound_joins_the_race(self):
        """A peer that dials us before connect() (before we have the key)
        is held, then handshaken once connect() runs (the reference drops
        such connections instead)."""
        from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

        from wormhole._transit import _codec
        key = b"k" * 32
        s = TransitSender(None, reactor=reactor, listen_addresses=LOOPBACK)
        hints = yield s.get_connection_hints()
        early = RawPeer(_codec.receiver_handshake(key))
        yield connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", hints[0]["port"]), early)
        s.set_transit_key(key)
        pipe = yield s.connect()
        self.addCleanup(pipe.close)
        self.assertTrue(pipe.describe().startswith("<-tcp:127.0.0.1:"))
        expected = _codec.sender_handshake(key) + b"go\n"
        self.assertEqual((yield early.first_bytes(len(expected))), expected)
