"""The "stream" feature (docs/transfer-v2.md "Streams"): the StreamOffer
record, the negotiation, and both machines back to back on a task.Clock
(the sender's StreamPump fed by a file-like object or a producer, the
receiver's StreamSink writing to a recording consumer); a cut stream, an
input that fails, a consumer that stops or pauses; and a hostile sender
(data after its end, records over the limits, an end whose length or
hash differs, an early end outside a stream)."""
import io
import os

from twisted.internet import interfaces, task
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole.transfer_v2 import _interfaces as I
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _versions as V
from wormhole.transfer_v2._receiving import (
    HashMismatch,
    Received,
    ReceiveFailed,
    StreamAborted,
)
from wormhole.transfer_v2._sending import OfferRejected, OfferResult
from wormhole.transfer_v2._source import DATA_CHUNK
from wormhole.transfer_v2._stream_sink import STOPPED_READING, StreamSink, SubchannelPacer
from wormhole.transfer_v2._stream_source import (
    StreamInputFailed,
    StreamPump,
    prepare_stream,
)

from . import _machines as machines


class Messages(unittest.TestCase):
    def test_round_trip(self):
        """A StreamOffer is a FileOffer record with "stream": true and no
        size; parsed back as a StreamOffer."""
        offer = M.StreamOffer("stdin", 1700000000)
        raw = M.encode_record(offer)
        self.assertEqual(raw[0], M.KIND_FILE_OFFER)
        fields = M._unpack(raw[1:], M.MAX_CONTROL_MESSAGE)
        self.assertEqual(fields, {"filename": "stdin", "timestamp": 1700000000,
                                  "stream": True})
        self.assertEqual(M.parse_record(raw), offer)
        text = M.StreamOffer("text", 1700000000, text=True)
        raw = M.encode_record(text)
        self.assertEqual(M._unpack(raw[1:], M.MAX_CONTROL_MESSAGE)["text"], True)
        self.assertEqual(M.parse_record(raw), text)

    def test_malformed(self):
        """A stream offer with a size (a made-up one), an offset, or a
        "stream" that is not true is refused; so are a bad name or time."""
        bad = [{"filename": "s", "timestamp": 0, "stream": True, "bytes": 10},
               {"filename": "s", "timestamp": 0, "stream": True, "offset": 0},
               {"filename": "s", "timestamp": 0, "stream": 1},
               {"filename": "s", "timestamp": 0, "stream": False, "bytes": 1},
               {"filename": 3, "timestamp": 0, "stream": True},
               {"filename": "s", "timestamp": -1, "stream": True},
               {"filename": "s", "stream": True},
               {"filename": "s", "timestamp": 0, "stream": True, "text": "yes"}]
        for fields in bad:
            raw = bytes((M.KIND_FILE_OFFER,)) + M._pack(fields)
            self.assertRaises(M.MessageError, M.parse_record, raw)

    def test_negotiated_only_when_both_declare(self):
        theirs = {"transfer-v2": {"mode": "receive", "features": {"stream": {}}}}
        self.assertTrue(V.negotiate("send", theirs).stream)
        without = {"transfer-v2": {"mode": "receive", "features": {"resume": {}}}}
        self.assertFalse(V.negotiate("send", without).stream)
        ours = dict(V.OUR_FEATURES)
        del ours["stream"]
        self.assertFalse(V.negotiate("send", theirs, ours).stream)


@implementer(interfaces.IConsumer)
class Consumer:
    """What the application gives ``accept_stream``: records every write
    and the producer registered with it."""

    def __init__(self):
        self.data = bytearray()
        self.producer = None
        self.unregistered = False

    def registerProducer(self, producer, streaming):
        assert streaming
        self.producer = producer

    def unregisterProducer(self):
        self.unregistered = True
        self.producer = None

    def write(self, data):
        assert isinstance(data, bytes)
        self.data += data


class _Subchannel:
    """The receiving end's subchannel as the pacer sees it."""

    def __init__(self):
        self.paused = 0

    def pauseProducing(self):
        self.paused += 1

    def resumeProducing(self):
        self.paused -= 1


class _Transport:
    """The sending end's record writer: each write one record, delivered
    on the next clock turn; a streaming producer registers here and can
    be paused by the test."""

    def __init__(self, link):
        self._link = link
        self.producer = None

    def write(self, data):
        self._link.to_receiver(bytes(data))

    def registerProducer(self, producer, streaming):
        self.producer = producer

    def unregisterProducer(self):
        self.producer = None


class Link:
    """One stream offer between an OfferSender (with a StreamPump) and an
    OfferReceiver (with a StreamSink), records on a task.Clock."""

    def __init__(self, source, accept=True, alter=None, cut_after=None):
        self.clock = task.Clock()
        self.closed = False
        self.cut = False  # the connection went: nothing queued arrives
        self.consumer = Consumer()
        self.subchannel = _Subchannel()
        self.sender_result, self.receiver_result = [], []
        self.sent = 0
        self._alter = alter
        self._cut_after = cut_after
        self._accept = accept
        self.transport = _Transport(self)
        self.outgoing = prepare_stream(source, "stdin")
        self.pump = None
        self.sender = machines.sender(
            self.outgoing.offer, self.to_receiver, self.close, self._start,
            self.sender_result.append)
        self.receiver = machines.receiver(
            lambda b: self._deliver(self.sender.got_record, b), self.close, self._ask,
            lambda n: None, self.receiver_result.append)

    def to_receiver(self, data):
        if self._alter is not None:
            data = self._alter(data)
            if data is None:
                return
        self._deliver(self.receiver.got_record, data)

    def _deliver(self, deliver, data):
        # what was written before a close still arrives; nothing after a cut
        if not self.closed:
            self.clock.callLater(0, lambda: self.cut or deliver(data))

    def close(self):
        if not self.closed:
            self.closed = True
            self.clock.callLater(0, self.sender.lost)
            self.clock.callLater(0, self.receiver.lost)

    def _ask(self, offer):
        assert isinstance(offer, M.StreamOffer)
        if not self._accept:
            return self.receiver.reject("no, thanks")
        pacer = SubchannelPacer(self.subchannel, lambda reason: self.clock.callLater(
            0, self.receiver.cancel, reason))
        self.sink = StreamSink(self.consumer, pacer)
        self.receiver.accept(self.sink)

    def _sent(self, n):
        self.sent += n
        if self._cut_after is not None and self.sent >= self._cut_after:
            self._cut_after = None
            self.cut = True
            self.close()

    def _start(self, resume):
        assert resume is None
        self.pump = StreamPump(self.clock, self.transport, self.outgoing.source,
                               self.sender.file_sent, self.sender.all_sent,
                               self.sender.input_failed, self._sent)
        self.pump.start()
        return self.pump

    def run(self):
        self.sender.connected()
        return self.spin()

    def spin(self):
        # (a Clock's advance runs what its calls schedule for now, too)
        self.clock.advance(0)
        return self


@implementer(interfaces.IPushProducer)
class Producer:
    """A push producer writing ``chunk`` bytes per clock turn while not
    paused, ``total`` in all, then finishing (or failing with ``fail``);
    with ``by_hand``, one piece per ``tick()`` of the test instead."""

    def __init__(self, clock, total, chunk=10_000, fail=None, by_hand=False):
        self.by_hand = by_hand
        self.clock = clock
        self.total = total
        self.chunk = chunk
        self.fail = fail
        self.written = bytearray()
        self.paused = False
        self.stopped = False
        self.pauses = 0
        self.consumer = None

    def start(self, consumer):
        self.consumer = consumer
        consumer.registerProducer(self, True)
        self._next()

    def _next(self):
        if not self.by_hand:
            self.clock.callLater(0, self.tick)

    def tick(self):
        if self.paused or self.stopped:
            return
        n = min(self.chunk, self.total - len(self.written))
        if n == 0:
            self.consumer.unregisterProducer()
            if self.fail:
                return self.consumer.fail(self.fail)
            return self.consumer.finish()
        data = os.urandom(n)
        self.written += data
        self.consumer.write(data)
        self._next()

    def pauseProducing(self):
        self.paused = True
        self.pauses += 1

    def resumeProducing(self):
        if self.paused:
            self.paused = False
            self._next()

    def stopProducing(self):
        self.stopped = True


class BackToBack(unittest.TestCase):
    def test_file_like(self):
        """A file-like source of several records and a partial one: the
        consumer gets exactly its bytes, both ends' acknowledgements
        match, records are whole Noise-message records."""
        data = os.urandom(3 * DATA_CHUNK + 1234)
        records = []
        link = Link(io.BytesIO(data), alter=lambda r: (records.append(len(r)), r)[1]).run()
        self.assertEqual(bytes(link.consumer.data), data)
        self.assertEqual(link.sender_result, [OfferResult(1, len(data))])
        result = link.receiver_result[0]
        self.assertIsInstance(result, Received)
        self.assertEqual((result.path, result.files, result.bytes), (None, 1, len(data)))
        self.assertTrue(link.consumer.unregistered)
        self.assertEqual(records[1:4], [1 + DATA_CHUNK] * 3)

    def test_empty(self):
        """A stream of no byte is complete with length 0."""
        link = Link(io.BytesIO(b"")).run()
        self.assertEqual(link.sender_result, [OfferResult(1, 0)])
        self.assertIsInstance(link.receiver_result[0], Received)
        self.assertEqual(link.consumer.data, b"")

    def test_push_producer(self):
        """A push producer writing 10,000-byte pieces: records are joined
        up to a whole record; the bytes arrive exact."""
        producer = Producer(None, 500_000)
        link = Link(producer.start)
        producer.clock = link.clock
        link.run()
        self.assertEqual(bytes(link.consumer.data), bytes(producer.written))
        self.assertEqual(link.sender_result, [OfferResult(1, 500_000)])

    def test_pull_producer(self):
        """An application's pull producer (one piece per resumeProducing):
        asked while the subchannel has room, not while it is paused."""
        written = bytearray()

        @implementer(interfaces.IPullProducer)
        class Pull:
            def __init__(self, consumer):
                self.consumer = consumer
                self.asked = 0

            def resumeProducing(self):
                self.asked += 1
                if len(written) >= 300_000:
                    self.consumer.unregisterProducer()
                    return self.consumer.finish()
                data = os.urandom(7_000)
                written.extend(data)
                self.consumer.write(data)

            def stopProducing(self):
                pass
        pulls = []

        def start(consumer):
            pulls.append(Pull(consumer))
            link.transport.producer.pauseProducing()  # the subchannel is full
            consumer.registerProducer(pulls[0], False)
        link = Link(start)
        link.sender.connected()
        link.clock.advance(0)
        self.assertEqual(pulls[0].asked, 0)
        link.transport.producer.resumeProducing()
        link.clock.advance(0)
        self.assertEqual(bytes(link.consumer.data), bytes(written))
        self.assertEqual(link.sender_result, [OfferResult(1, 43 * 7_000)])
        self.assertEqual(pulls[0].asked, 44)  # 43 pieces, then the end

    def test_paused_by_the_subchannel(self):
        """The subchannel's pause (Dilation's flow control) pauses the
        application's producer; nothing more is written until resumed."""
        producer = Producer(None, 200_000)
        link = Link(producer.start)
        producer.clock = link.clock
        producer.by_hand = True
        link.run()
        producer.tick()
        link.transport.producer.pauseProducing()
        self.assertTrue(producer.paused)
        producer.by_hand = False
        producer.tick()  # paused: writes nothing
        link.spin()
        self.assertEqual(len(producer.written), 10_000)
        self.assertEqual(link.sender_result, [])
        link.transport.producer.resumeProducing()
        link.spin()
        self.assertEqual(link.sender_result, [OfferResult(1, 200_000)])
        self.assertEqual(bytes(link.consumer.data), bytes(producer.written))

    def test_consumer_pauses_the_subchannel(self):
        """The consumer's pause reaches the subchannel (the pacer), and
        the end of the stream lets it flow again."""
        producer = Producer(None, 100_000, by_hand=True)
        link = Link(producer.start)
        producer.clock = link.clock
        link.run()
        link.consumer.producer.pauseProducing()
        self.assertEqual(link.subchannel.paused, 1)
        producer.by_hand = False
        producer.tick()
        link.spin()
        self.assertIsInstance(link.receiver_result[0], Received)
        self.assertEqual(link.subchannel.paused, 0)

    def test_input_fails(self):
        """The input fails: the receiver hears why (StreamAborted, never
        Received), the sender's offer fails with StreamInputFailed."""
        producer = Producer(None, 100_000, fail="read error: EIO")
        link = Link(producer.start)
        producer.clock = link.clock
        link.run()
        result = link.receiver_result[0]
        self.assertIsInstance(result, StreamAborted)
        self.assertIn("read error: EIO", str(result))
        self.assertIsInstance(link.sender_result[0], StreamInputFailed)
        self.assertIn("after 100000 bytes", str(link.sender_result[0]))

    def test_file_like_read_error(self):
        class Broken(io.RawIOBase):
            def read(self, n):
                raise OSError(5, "Input/output error")
        link = Link(Broken()).run()
        self.assertIsInstance(link.receiver_result[0], StreamAborted)
        self.assertIn("Input/output error", str(link.receiver_result[0]))

    def test_cut(self):
        """The subchannel goes away mid-stream: never Received; the bytes
        the consumer got are fewer than were sent in all."""
        link = Link(io.BytesIO(os.urandom(10 * DATA_CHUNK)), cut_after=3 * DATA_CHUNK).run()
        result = link.receiver_result[0]
        self.assertIsInstance(result, ReceiveFailed)
        self.assertNotIsInstance(result, Received)
        self.assertIn("closed before it completed", str(result))
        self.assertLess(len(link.consumer.data), 10 * DATA_CHUNK)
        self.assertTrue(link.consumer.unregistered)

    def test_consumer_stops(self):
        """The consumer stops (its reader went away): the stream is
        cancelled, the sender hears STOPPED_READING, the producer stops."""
        producer = Producer(None, 10 ** 9, by_hand=True)
        link = Link(producer.start)
        producer.clock = link.clock
        link.run()
        producer.tick()
        link.spin()
        link.consumer.producer.stopProducing()
        link.spin()
        self.assertIsInstance(link.sender_result[0], OfferRejected)
        self.assertEqual(link.sender_result[0].reason, STOPPED_READING)
        self.assertIsInstance(link.receiver_result[0], ReceiveFailed)
        self.assertTrue(producer.stopped)

    def test_rejected(self):
        link = Link(io.BytesIO(b"x"), accept=False).run()
        self.assertIsInstance(link.sender_result[0], OfferRejected)
        self.assertEqual(link.consumer.data, b"")

    def test_interfaces(self):
        sink = StreamSink(Consumer(), SubchannelPacer(_Subchannel(), lambda r: None))
        self.assertTrue(verifyObject(I.ISink, sink))
        self.assertTrue(verifyObject(I.IWriter, sink.open_file(("s",), None)))
        self.assertFalse(I.IResumableSink.providedBy(sink))


class Hostile(unittest.TestCase):
    """A sender that breaks the stream's rules."""

    def receive(self, records):
        """Feed ``records`` to an OfferReceiver that accepts the stream."""
        consumer, results, written = Consumer(), [], []
        r = machines.receiver(written.append, lambda: written.append("close"),
                              lambda offer: r.accept(StreamSink(consumer, SubchannelPacer(
                                  _Subchannel(), lambda reason: None))),
                              lambda n: None, results.append)
        r.got_record(M.encode_record(M.StreamOffer("s", 0)))
        for record in records:
            r.got_record(record)
        r.lost()
        return consumer, results, written

    def ack(self, data):
        h = M.new_hash()
        h.update(data)
        return M.encode_record(M.FileAcknowledge(len(data), h.digest()))

    def test_data_after_the_end(self):
        """A data record after the sender's end is never written."""
        consumer, results, _ = self.receive([b"\x05abc", self.ack(b"abc"), b"\x05more"])
        self.assertEqual(bytes(consumer.data), b"abc")
        self.assertIsInstance(results[0], Received)
        self.assertEqual(results[0].bytes, 3)

    def test_end_length_mismatch(self):
        h = M.new_hash()
        h.update(b"abc")
        wrong = M.encode_record(M.FileAcknowledge(4, h.digest()))
        _, results, written = self.receive([b"\x05abc", wrong])
        self.assertIsInstance(results[0], HashMismatch)
        self.assertIn("cannot be taken back", str(results[0]))
        self.assertIn("close", written)

    def test_end_hash_mismatch(self):
        _, results, _ = self.receive([b"\x05abc", self.ack(b"abd")])
        self.assertIsInstance(results[0], HashMismatch)

    def test_record_over_the_limit(self):
        """A data record over 65535 bytes: a protocol error, not written."""
        consumer, results, _ = self.receive([b"\x05" + b"x" * (M.MAX_DATA_PAYLOAD + 1)])
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertIn("at most 65535", str(results[0]))
        self.assertEqual(consumer.data, b"")

    def test_length_over_the_limit(self):
        """An end claiming 2**63 bytes or more is malformed."""
        raw = bytes((M.KIND_FILE_ACK,)) + M._pack({"bytes": 2 ** 63, "hash": b"\0" * 32})
        _, results, _ = self.receive([b"\x05abc", raw])
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertIn("non-negative integer", str(results[0]))

    def test_cut_without_end(self):
        consumer, results, _ = self.receive([b"\x05abc"])
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertEqual(bytes(consumer.data), b"abc")

    def test_early_end_outside_a_stream(self):
        """An OfferReject from the offering side of a file offer is a
        protocol error (only a stream's sender may end it early)."""
        results = []
        r = machines.receiver(lambda b: None, lambda: None, lambda offer: None,
                              lambda n: None, results.append)
        r.got_record(M.encode_record(M.FileOffer("f", 0, 3)))
        r.got_record(M.encode_record(M.OfferReject("stop")))
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertIn("unexpected OfferReject", str(results[0]))

    def test_early_end_before_accept(self):
        results = []
        r = machines.receiver(lambda b: None, lambda: None, lambda offer: None,
                              lambda n: None, results.append)
        r.got_record(M.encode_record(M.StreamOffer("s", 0)))
        r.got_record(M.encode_record(M.OfferReject("stop")))
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertIn("outside of its stream", str(results[0]))
