"""transfer_v2._framing: records framed by their length come back whole
and in order however the deliveries split or join the stream (split at
random points, byte by byte, in one block), and a length this protocol
never sends is refused as soon as its header is in, before anything of
the record is kept (docs/transfer-v2.md "Record framing")."""
import itertools

from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._dilation import _records as DR
from wormhole.transfer_v2 import _framing as F
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _source as S
from wormhole.transfer_v2 import _versions as V

from ..dilation._noise_pair import pair

# records of every kind the text defines, and of a reserved one (the
# framing carries it; the parser refuses it later), up to their limits
# for data and a few KiB for the rest (hypothesis keeps examples small)
records = st.one_of(
    st.binary(max_size=M.MAX_DATA_PAYLOAD).map(lambda b: bytes((M.KIND_FILE_DATA,)) + b),
    st.tuples(st.sampled_from([1, 2, 3, 4, 6, 0, 200]), st.binary(max_size=4096))
    .map(lambda kb: bytes((kb[0],)) + kb[1]))


def stream_of(rs):
    return b"".join(F.frame(r) for r in rs)


def deliver(pieces):
    reader = F.Deframer()
    got = []
    for piece in pieces:
        got.extend(bytes(r) for r in reader.feed(piece))
    return got, reader


class RoundTrip(unittest.TestCase):
    @given(st.lists(records, max_size=8), st.lists(st.integers(min_value=0), max_size=20))
    def test_split_and_joined_at_random(self, rs, cuts):
        """Deliveries cut anywhere (several records in one, one record in
        several): the same records in the same order, nothing pending."""
        stream = stream_of(rs)
        points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
        got, reader = deliver([stream[a:b] for a, b in itertools.pairwise(points)])
        self.assertEqual(got, rs)
        self.assertEqual(reader._partial, bytearray())

    @given(st.lists(records, max_size=3))
    def test_byte_by_byte_and_one_block(self, rs):
        """Every byte in its own delivery, and the whole stream in one."""
        stream = stream_of(rs)
        self.assertEqual(deliver([stream[i:i + 1] for i in range(len(stream))])[0], rs)
        self.assertEqual(deliver([stream])[0], rs)

    def test_largest_records(self):
        """A DirectoryOffer and an accept at MAX_OFFER_RECORD, a data
        record at the text's 65536, in 1 MiB deliveries (how our Dilation
        splits a write): whole."""
        rs = [bytes((M.KIND_DIRECTORY_OFFER,)) + b"d" * M.MAX_OFFER_RECORD,
              bytes((M.KIND_FILE_DATA,)) + b"x" * M.MAX_DATA_PAYLOAD,
              bytes((M.KIND_OFFER_ACCEPT,)) + b"a" * M.MAX_OFFER_RECORD]
        stream = stream_of(rs)
        mib = 1024 * 1024
        got, _ = deliver([stream[i:i + mib] for i in range(0, len(stream), mib)])
        self.assertEqual([len(r) for r in got], [len(r) for r in rs])
        self.assertEqual(got, rs)

    def test_whole_records_are_not_copied(self):
        """A record that arrived whole in one delivery is a view of it."""
        data = F.frame(b"\x05" + b"x" * 100)
        (record,) = F.Deframer().feed(data)
        self.assertIs(record.obj, data)

    def test_writer(self):
        """The writer frames each record; without the feature the
        transport is used as it is (one write, one record)."""
        class Transport:
            def __init__(self):
                self.written = []
                self.write = self.written.append
        t = Transport()
        reader, writer = F.pipe(t, framed=True)
        writer.write(b"\x03")
        self.assertEqual(t.written, [b"\x00\x00\x00\x01\x03"])
        self.assertIsInstance(reader, F.Deframer)
        reader, writer = F.pipe(t, framed=False)
        self.assertIs(writer, t)
        self.assertEqual(reader.feed(b"\x03\x05"), [b"\x03\x05"])


class Transport:
    def __init__(self):
        self.written = []
        self.lost = False

    def write(self, data):
        assert not self.lost, "a write after loseConnection"
        self.written.append(data)

    def loseConnection(self):  # noqa: N802 (Twisted's name)
        self.lost = True


class Burst(unittest.TestCase):
    """FramedWriter.gathered (docs/transfer-v2.md, "Per-record work"): a
    burst's frames leave as few writes whose concatenation is the same
    stream, in the same order."""

    def test_small_records_leave_in_one_write(self):
        """Records written within a burst are held and written together
        when it ends; nothing before."""
        t = Transport()
        _, writer = F.pipe(t, framed=True)
        rs = [b"\x03", b"\x05" + b"a" * 100, b"\x04" + b"b" * 40]
        with F.burst(writer):
            for r in rs:
                writer.write(r)
            self.assertEqual(t.written, [])
        self.assertEqual(t.written, [stream_of(rs)])

    def test_batches_are_bounded(self):
        """What was held is written before a frame that would take it past
        BATCH_BYTES; a frame that large goes out alone, as it is (the
        Streamer's full data frame is exactly BATCH_BYTES, a 65535-byte
        record more); the stream is the same as one write per record."""
        t = Transport()
        _, writer = F.pipe(t, framed=True)
        full = b"\x05" + b"x" * S.DATA_CHUNK
        largest = b"\x05" + b"z" * M.MAX_DATA_PAYLOAD
        small = [b"\x05" + b"y" * 30000, b"\x04"]
        rs = [full, b"\x03", full, *small, largest, b"\x06", b"\x06"]
        with F.burst(writer):
            for r in rs:
                writer.write(r)
        self.assertEqual(len(F.frame(full)), F.BATCH_BYTES)
        self.assertEqual(b"".join(t.written), stream_of(rs))
        self.assertEqual(t.written, [F.frame(full), F.frame(b"\x03"), F.frame(full),
                                     stream_of(small), F.frame(largest),
                                     stream_of([b"\x06", b"\x06"])])
        self.assertEqual(deliver([b"".join(t.written)])[0], rs)

    def test_full_data_record_is_one_noise_message(self):
        """The Streamer's full data record, framed, in the Dilation DATA
        record that carries it, is sealed as one Noise message (one AEAD
        call each way, Dilation protocol, "L2 Message Framing"); one byte
        more, two."""
        sender, _ = pair()
        for payload, messages in ((S.DATA_CHUNK, 1), (S.DATA_CHUNK + 1, 2)):
            write = F.frame(b"\x05" + bytes(payload))
            head, body = DR.encode_record_parts(DR.data_unchecked(3, 0, write))
            self.assertEqual(len(sender.encrypt_parts(head, body)), 1 + messages)

    def test_nested_and_failing_bursts_flush(self):
        """An inner burst leaves the writing to the outer one; a burst
        ended by an exception still writes what it held."""
        t = Transport()
        _, writer = F.pipe(t, framed=True)
        with self.assertRaises(ZeroDivisionError):
            with F.burst(writer):
                writer.write(b"\x03")
                with F.burst(writer):
                    writer.write(b"\x04")
                self.assertEqual(t.written, [])
                raise ZeroDivisionError
        self.assertEqual(t.written, [stream_of([b"\x03", b"\x04"])])
        writer.write(b"\x06")  # outside a burst: at once
        self.assertEqual(t.written[-1], F.frame(b"\x06"))

    def test_close_writes_what_was_held_first(self):
        """loseConnection within a burst writes the held frames before
        the transport closes, and nothing is written after it."""
        t = Transport()
        _, writer = F.pipe(t, framed=True)
        with F.burst(writer):
            writer.write(b"\x04")
            writer.loseConnection()
            self.assertEqual(t.written, [F.frame(b"\x04")])
            self.assertTrue(t.lost)
        self.assertEqual(t.written, [F.frame(b"\x04")])

    def test_answers_leave_at_the_turn_end(self):
        """answers: what is written while handling the turn's deliveries,
        bursts included, goes out in one write when the turn ends (one
        call, made only when something was written)."""
        t, calls = Transport(), []
        _, writer = F.pipe(t, framed=True)

        def call_later(delay, f):
            calls.append((delay, f))
        with F.answers(writer, call_later):
            pass  # nothing to answer: nothing scheduled
        self.assertEqual(calls, [])
        for delivery in ([b"\x06"], [b"\x06", b"\x06"]):
            with F.answers(writer, call_later):
                with F.burst(writer):
                    for r in delivery:
                        writer.write(r)
        self.assertEqual((t.written, len(calls), calls[0][0]), ([], 1, 0))
        calls[0][1]()
        self.assertEqual(t.written, [stream_of([b"\x06"] * 3)])
        writer.write(b"\x04")  # the turn is over: at once
        self.assertEqual(t.written[-1], F.frame(b"\x04"))

    def test_close_within_the_turn(self):
        """A close before the turn ends writes what was held first; the
        turn's end then writes nothing; an answer ended by an exception
        is written at once."""
        t, calls = Transport(), []
        _, writer = F.pipe(t, framed=True)
        with F.answers(writer, lambda delay, f: calls.append(f)):
            writer.write(b"\x06")
        writer.loseConnection()
        self.assertEqual((t.written, t.lost), ([F.frame(b"\x06")], True))
        calls[0]()
        self.assertEqual(t.written, [F.frame(b"\x06")])
        t2 = Transport()
        _, writer = F.pipe(t2, framed=True)
        with self.assertRaises(ZeroDivisionError):
            with F.answers(writer, self.fail):
                writer.write(b"\x06")
                raise ZeroDivisionError
        self.assertEqual(t2.written, [F.frame(b"\x06")])

    def test_lost_within_the_turn(self):
        """The subchannel lost before the turn ends (the peer closed it):
        what was held is dropped, the turn's end writes nothing."""
        t, calls = Transport(), []
        _, writer = F.pipe(t, framed=True)
        with F.answers(writer, lambda delay, f: calls.append(f)):
            writer.write(b"\x06")
        F.lost(writer)
        calls[0]()
        self.assertEqual(t.written, [])
        F.lost(F.pipe(t, framed=False)[1])  # nothing held without the feature

    def test_unframed_peer_writes_each_record(self):
        """Without the feature each write is a record: a burst holds nothing."""
        t = Transport()
        _, writer = F.pipe(t, framed=False)
        with F.answers(writer, self.fail), F.burst(writer):
            writer.write(b"\x03")
            writer.write(b"\x04")
            self.assertEqual(t.written, [b"\x03", b"\x04"])


class Limits(unittest.TestCase):
    def refused(self, pieces):
        reader = F.Deframer()
        for piece in pieces[:-1]:
            self.assertEqual(reader.feed(piece), [])
        with self.assertRaises(F.FramingError) as e:
            reader.feed(pieces[-1])
        # nothing of the record was kept, and the stream is over
        self.assertEqual(reader._partial, bytearray())
        self.assertEqual(reader.feed(F.frame(b"\x03")), [])
        return str(e.exception)

    def test_over_the_maximum(self):
        """A length over MAX_RECORD: refused with its 4 header bytes, also
        when they come one at a time or after a whole record."""
        header = (F.MAX_RECORD + 1).to_bytes(4, "big")
        self.assertIn(f"at most {F.MAX_RECORD}", self.refused([header]))
        self.refused([header[i:i + 1] for i in range(4)])
        self.refused([F.frame(b"\x03") + header])
        self.refused([b"\xff\xff\xff\xff" + b"\x02" * 10])

    def test_over_the_kind_limit(self):
        """Data over 65536 bytes, a FileOffer over 64 KiB: refused once the
        kind byte is in."""
        data = (1 + M.MAX_DATA_PAYLOAD + 1).to_bytes(4, "big") + bytes((M.KIND_FILE_DATA,))
        self.assertIn("kind 5", self.refused([data]))
        self.refused([data[:4], data[4:]])
        offer = (1 + M.MAX_CONTROL_MESSAGE + 1).to_bytes(4, "big") + b"\x01"
        self.refused([offer[:2], offer[2:]])

    def test_empty_record(self):
        """A frame of length 0 carries no kind: refused."""
        self.assertIn("empty", self.refused([b"\x00\x00\x00\x00"]))

    def test_at_the_limits(self):
        """Exactly at each kind's limit is accepted."""
        for kind in (1, 2, 3, 4, 5, 6):
            length = F.limit_for(kind)
            (got,) = F.Deframer().feed(F.frame(bytes((kind,)) + b"\0" * (length - 1)))
            self.assertEqual(len(got), length)


class Feature(unittest.TestCase):
    def test_declared_and_negotiated(self):
        """We declare "framed-records"; it is used only when the peer
        declares it too (our earlier releases do not)."""
        self.assertIn(F.FEATURE, V.app_versions("send")["transfer-v2"]["features"])
        both = V.negotiate("send", V.app_versions("receive"))
        self.assertIn(V.FRAMED_RECORDS, both.features)
        earlier = {"resume": {}, "empty-folders": {}, "session-totals": {}}
        old = V.negotiate("send", V.app_versions("receive", earlier))
        self.assertNotIn(V.FRAMED_RECORDS, old.features)

    def test_refusal(self):
        """An offer too long for the peer is refused before it is sent:
        1 MiB to a peer without the feature, MAX_RECORD with it."""
        self.assertIsNone(F.refusal(b"x" * F.UNFRAMED_MAX, framed=False))
        self.assertIn("without", F.refusal(b"x" * (F.UNFRAMED_MAX + 1), framed=False))
        self.assertIsNone(F.refusal(b"x" * (F.UNFRAMED_MAX + 1), framed=True))
        self.assertIsNotNone(F.refusal(b"x" * (F.MAX_RECORD + 1), framed=True))
