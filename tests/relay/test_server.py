"""The relay over loopback TCP, in the test's reactor (start_transit_relay):
pairing, piping a few MB both ways, backpressure, closing, usage moods.

Every class runs twice: TCP pairs splicing (splice(2), Linux) and on the
plain copying path (``splice=False``, what other systems get)."""

import errno
import hashlib
import os

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.interfaces import IHalfCloseableProtocol
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole_relay._interfaces import IPipePool, IRelayConnection, ISplicer, ITransportGlue
from wormhole_relay._splice import _End, splice_available

from ._client import RawClient
from ._fakes import SIDE1, SIDE2, TOKEN, TOKEN2, handshake
from ._support import Base, _Flood, eventually


@implementer(IHalfCloseableProtocol)
class _Answering(RawClient):
    """Reads until the end of file, then answers and closes (a receiver's
    ack after the sender closed)."""

    def __init__(self):
        super().__init__()
        self.eof = Deferred()

    def readConnectionLost(self):
        self.eof.callback((self.count, self.sha.hexdigest()))
        self.transport.write(b"ack after the end")
        self.transport.loseConnection()

    def writeConnectionLost(self):
        pass

    def connectionLost(self, reason):
        if not self.eof.called:
            self.eof.errback(AssertionError(
                f"lost without an end of file after {self.count} bytes: "
                f"{reason.value}"))
        super().connectionLost(reason)


def _pipes():
    """How many pipes this process has open (the splice pipes are ours)."""
    fds = "/proc/self/fd"
    n = 0
    for fd in os.listdir(fds):
        try:
            n += os.readlink(f"{fds}/{fd}").startswith("pipe:")
        except OSError:
            pass
    return n


class Basics(Base):
    @inlineCallbacks
    def test_api(self):
        """start_transit_relay gives a tcp hint on 127.0.0.1, the port, no
        WebSocket unless asked, and stops cleanly."""
        yield self.start()
        self.assertEqual(self.r.hint, f"tcp:127.0.0.1:{self.r.port}")
        self.assertIsNone(self.r.websocket_url)
        self.assertEqual(self.r.usage(), [])

    @inlineCallbacks
    def test_wired_objects(self):
        """Every live connection machine and its glue provide their
        interfaces."""
        yield self.start()
        yield self.pair()
        conns = self.r.relay.connections()
        self.assertEqual(len(conns), 2)
        for c in conns:
            verifyObject(IRelayConnection, c)
            verifyObject(ITransportGlue, c.glue)
            if c.glue._splicer is not None:  # spliced pairs
                verifyObject(ISplicer, c.glue._splicer)
                verifyObject(IPipePool, c.glue.factory.pipes)

    def spliced(self):
        """How many sockets our splice descriptors hold in the reactor."""
        return sum(1 for d in reactor.getReaders() + reactor.getWriters()
                   if isinstance(d, _End))

    @inlineCallbacks
    def test_which_path(self):
        """A TCP pair is spliced (our descriptors replace the transports
        in the reactor) when splice is on and this is Linux; otherwise the
        transports copy the bytes themselves. Either way they relay, and
        the usage record counts every byte."""
        yield self.start()
        a, b = yield self.pair()
        expected = 2 if (self.splice and splice_available()) else 0
        self.assertEqual(self.spliced(), expected)
        yield self.check_relays(a, b)
        self.assertEqual(self.spliced(), expected)
        a.transport.loseConnection()
        yield b.closed
        yield self.r.when_usage(1)
        self.assertEqual(self.r.usage()[0]["total_bytes"], 14)
        self.assertEqual(self.spliced(), 0)

    @inlineCallbacks
    def test_splice_refused(self):
        """When the kernel refuses to splice (EINVAL), the pair carries on
        over the plain path, bytes whole and counted."""
        def refuse(*a, **kw):
            raise OSError(errno.EINVAL, "Invalid argument")
        self.patch(os, "splice", refuse)
        yield self.start()
        a, b = yield self.pair()
        yield self.check_relays(a, b)
        size = 512 * 1024
        data = os.urandom(size)
        a.keep = b.keep = False
        a.send(data)
        yield b.when_received(3 + 7 + size)
        self.assertEqual(b.sha.hexdigest(), hashlib.sha256(
            b"ok\nping-ab" + data).hexdigest())
        self.assertEqual(self.spliced(), 0)
        b.transport.loseConnection()
        yield a.closed
        yield self.r.when_usage(1)
        self.assertEqual(self.r.usage()[0]["total_bytes"], size + 14)

    @inlineCallbacks
    def test_reset_mid_transfer(self):
        """A client that resets its connection while megabytes flow both
        ways: its partner is closed, the pair's record is written (happy,
        with what was moved), nothing is logged as an error, and no pipe
        is left open once the relay stops."""
        yield self.start()
        a, b = yield self.pair()
        # (the reactor makes a pipe of its own with the first connection;
        # a spliced pair takes its first pipe with its first read)
        pipes_before = _pipes()
        a.keep = b.keep = False
        chunk = os.urandom(256 * 1024)
        for _ in range(8):
            a.send(chunk)
            b.send(chunk)
        yield b.when_received(3 + 256 * 1024)
        a.transport.abortConnection()
        yield b.closed
        yield self.r.when_usage(1)
        [record] = self.r.usage()
        self.assertEqual(record["mood"], "happy")
        self.assertGreaterEqual(record["total_bytes"], 256 * 1024)
        self.assertLessEqual(record["total_bytes"], 2 * 8 * 256 * 1024)
        yield self.r.stop()
        self.assertEqual(_pipes(), pipes_before)

    @inlineCallbacks
    def test_pair_with_side(self):
        """Two clients with one token and two sides both read ok\\n, then
        each one's bytes reach the other."""
        yield self.start()
        a, b = yield self.pair()
        yield self.check_relays(a, b)

    @inlineCallbacks
    def test_pair_without_side(self):
        """The old handshake without a side pairs too."""
        yield self.start()
        a, b = yield self.pair(sides=(None, None))
        yield self.check_relays(a, b)

    @inlineCallbacks
    def test_pipe_megabytes_both_ways(self):
        """4 MB each way at the same time arrive whole and in order (same
        sha256)."""
        yield self.start()
        a, b = yield self.pair()
        a.keep = b.keep = False
        size = 4 * 1024 * 1024
        data_ab = os.urandom(size)
        data_ba = os.urandom(size)
        for i in range(0, size, 256 * 1024):
            a.send(data_ab[i:i + 256 * 1024])
            b.send(data_ba[i:i + 256 * 1024])
        yield b.when_received(3 + size)
        yield a.when_received(3 + size)
        self.assertEqual(b.sha.hexdigest(),
                         hashlib.sha256(b"ok\n" + data_ab).hexdigest())
        self.assertEqual(a.sha.hexdigest(),
                         hashlib.sha256(b"ok\n" + data_ba).hexdigest())

    @inlineCallbacks
    def test_partner_close_closes_other(self):
        """When one side closes, the other is closed after what was sent
        before the close has been delivered."""
        yield self.start()
        a, b = yield self.pair()
        a.send(b"last words")
        a.transport.loseConnection()
        got = yield b.closed
        self.assertEqual(got, b"ok\nlast words")
        yield a.closed
        yield self.r.when_usage(1)
        self.assertEqual(self.usage_moods(), ["happy"])
        self.assertEqual(self.r.usage()[0]["total_bytes"], 10)

    @inlineCallbacks
    def test_last_bytes_then_close_then_late_reply(self):
        """The wire pattern of wormhole-william's failing sends as
        the relay sees it: one side sends its last 400 kB and closes at
        once (while the other is not reading), the other then answers after
        the end of file. The answer has no one to go to and is dropped;
        every byte sent before the close arrives, then the end of file,
        and the pair's record is happy (docs/relay.md, "wormhole-william as
        a sender")."""
        yield self.start()
        a = yield self.clients.connect(self.r.port)
        b = yield self.clients.connect(self.r.port, protocol=_Answering)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        yield a.when_received(3)
        yield b.when_received(3)
        b.keep = False
        b.transport.pauseProducing()
        data = os.urandom(400 * 1000)
        a.send(data)
        a.transport.loseConnection()
        # let the relay take what fits before b reads (no assertion on it)
        yield eventually(0.05)
        b.transport.resumeProducing()
        count, sha = yield b.eof
        self.assertEqual((count, sha),
                         (3 + len(data),
                          hashlib.sha256(b"ok\n" + data).hexdigest()))
        yield a.closed
        yield b.closed
        yield self.r.when_usage(1)
        self.assertEqual(self.usage_moods(), ["happy"])
        self.assertEqual(self.r.usage()[0]["total_bytes"], len(data))

    @inlineCallbacks
    def test_many_pairs(self):
        """Ten pairs on ten tokens relay independently."""
        yield self.start()
        pairs = []
        for i in range(10):
            p = yield self.pair(token=("%064x" % i))
            pairs.append(p)
        for i, (a, b) in enumerate(pairs):
            yield self.check_relays(a, b, tag=b"%d" % i)

    @inlineCallbacks
    def test_stop_drops_everything(self):
        """stop() closes waiting and paired connections alike."""
        yield self.start()
        a, b = yield self.pair()
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN2, SIDE1))
        yield self.r.stop()
        yield a.closed
        yield b.closed
        yield c.closed


def _buffered(transport):
    """Bytes a Twisted TCP transport holds, not yet given to the kernel."""
    return (len(transport.dataBuffer) - transport.offset
            + transport._tempDataLen)


class Backpressure(Base):
    @inlineCallbacks
    def test_slow_receiver_pauses_sender(self):
        """A receiver that stops reading makes the relay stop reading from
        the sender (producer/consumer), so the sender is paused by its own
        transport long before it has sent everything, and the relay never
        holds more than about one socket buffer for the receiver. Once the
        receiver reads again, every byte arrives in order."""
        yield self.start()
        a, b = yield self.pair()
        b.keep = False
        b.transport.pauseProducing()  # b stops reading

        def relay_buffered():
            return max(_buffered(c.glue.transport)
                       for c in self.r.relay.connections())

        limit = 64 * 1024 * 1024
        flood = _Flood(a.transport, limit, relay_buffered)
        yield flood.paused
        self.assertLess(flood.sent, limit)
        # let the relay run a few turns while b still does not read
        for _ in range(20):
            yield eventually()
            flood.max_seen = max(flood.max_seen, relay_buffered())
        # Twisted's own buffer limit (64 KiB) plus one read
        self.assertLess(flood.max_seen, 1024 * 1024)
        flood.stop()
        sent = flood.sent
        b.transport.resumeProducing()
        yield b.when_received(3 + sent)
        self.assertEqual(b.count, 3 + sent)
        # the flood's hash starts with the relay's "ok\n", like b's
        self.assertEqual(b.sha.hexdigest(), flood.sha.hexdigest())


# the same, on the plain path (no splice)

class BasicsPlain(Basics):
    splice = False


class BackpressurePlain(Backpressure):
    splice = False
