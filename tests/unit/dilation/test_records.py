"""L3 records (Dilation protocol, "L2 Message Payload Encoding"): tags,
layout, round trips and refusal of malformed plaintexts."""

from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._dilation import _records as R

u32 = st.integers(min_value=0, max_value=2 ** 32 - 1)
four = st.binary(min_size=4, max_size=4)
records = st.one_of(
    st.just(R.KCM()),
    st.builds(R.Ping, four),
    st.builds(R.Pong, four),
    st.builds(R.Open, u32, u32, st.text(max_size=40)),
    st.builds(R.Data, u32, u32, st.binary(max_size=300)),
    st.builds(R.Close, u32, u32),
    st.builds(R.Ack, u32),
)


class Layout(unittest.TestCase):
    def test_tags(self):
        """The tag values are the ones with KCM=0x00 (docs/dilation.md,
        "Wire facts settled by interop with the reference 0.24")."""
        self.assertEqual(
            [R.T_KCM, R.T_PING, R.T_PONG, R.T_OPEN, R.T_DATA, R.T_CLOSE, R.T_ACK],
            list(range(7)))

    def test_exact_bytes(self):
        """Each record's bytes: tag, then big-endian 4-byte fields."""
        self.assertEqual(R.encode_record(R.KCM()), b"\x00")
        self.assertEqual(R.encode_record(R.Ping(b"abcd")), b"\x01abcd")
        self.assertEqual(R.encode_record(R.Pong(b"\x00" * 4)), b"\x02\x00\x00\x00\x00")
        self.assertEqual(R.encode_record(R.Open(1, 2, "chat")),
                         b"\x03\x00\x00\x00\x01\x00\x00\x00\x02chat")
        self.assertEqual(R.encode_record(R.Data(3, 258, b"hi")),
                         b"\x04\x00\x00\x00\x03\x00\x00\x01\x02hi")
        self.assertEqual(R.encode_record(R.Close(5, 7)),
                         b"\x05\x00\x00\x00\x05\x00\x00\x00\x07")
        self.assertEqual(R.encode_record(R.Ack(2 ** 32 - 1)), b"\x06\xff\xff\xff\xff")

    def test_open_without_name(self):
        """An OPEN of exactly 9 bytes (as the Dilation protocol,
        "L2 Message Payload Encoding", draws it) parses with an
        empty subprotocol name rather than being refused."""
        self.assertEqual(R.parse_record(b"\x03" + b"\x00" * 8), R.Open(0, 0, ""))

    def test_bad_values_refused_at_construction(self):
        """Out-of-range ids and wrong-size ping ids never reach the wire."""
        self.assertRaises(ValueError, R.Data, -1, 0, b"")
        self.assertRaises(ValueError, R.Close, 0, 2 ** 32)
        self.assertRaises(ValueError, R.Ack, True)
        self.assertRaises(ValueError, R.Ping, b"abc")
        self.assertRaises(TypeError, R.encode_record, object())


class RoundTrip(unittest.TestCase):
    @given(records)
    def test_round_trip(self, r):
        """parse(encode(r)) == r for every record."""
        self.assertEqual(R.parse_record(R.encode_record(r)), r)

    @given(records)
    def test_accepts_memoryview_and_bytearray(self, r):
        """The parser takes any bytes-like plaintext (frames are sliced)."""
        b = R.encode_record(r)
        self.assertEqual(R.parse_record(bytearray(b)), r)
        self.assertEqual(R.parse_record(memoryview(b)), r)


class Malformed(unittest.TestCase):
    def test_empty(self):
        """An empty plaintext has no tag: RecordError."""
        self.assertRaises(R.RecordError, R.parse_record, b"")

    def test_unknown_tag(self):
        """Tags above 0x06 are refused."""
        for t in (7, 0x42, 0xff):
            self.assertRaises(R.RecordError, R.parse_record, bytes([t]) + b"\x00" * 8)

    def test_bad_utf8_name(self):
        """An OPEN whose name is not UTF-8 is refused, not mangled."""
        self.assertRaises(R.RecordError, R.parse_record, b"\x03" + b"\x00" * 8 + b"\xff")

    @given(st.sampled_from([0, 1, 2, 3, 4, 5, 6]), st.binary(max_size=12))
    def test_wrong_lengths(self, tag, body):
        """Fixed-size records with any other length are refused; DATA/OPEN
        need at least their 8 header bytes; nothing else raises."""
        fixed = {0: 0, 1: 4, 2: 4, 5: 8, 6: 4}
        b = bytes([tag]) + body
        if tag in fixed and len(body) != fixed[tag] or tag in (3, 4) and len(body) < 8:
            self.assertRaises(R.RecordError, R.parse_record, b)
        else:
            try:
                R.parse_record(b)
            except R.RecordError:
                self.assertEqual(tag, 3)  # only a non-UTF-8 name

    @given(st.binary(max_size=40))
    def test_never_other_exception(self, b):
        """Arbitrary bytes either parse or raise RecordError, nothing else."""
        try:
            r = R.parse_record(b)
        except R.RecordError:
            return
        self.assertEqual(R.parse_record(R.encode_record(r)), r)


class Pieces(unittest.TestCase):
    @given(records, st.lists(st.integers(min_value=0), max_size=4))
    def test_pieces_same_as_whole(self, r, cuts):
        """parse_record_pieces of any split of a record's bytes (as Noise
        messages split it) equals parse_record of the whole."""
        b = R.encode_record(r)
        cuts = sorted({c % (len(b) + 1) for c in cuts})
        pieces, prev = [], 0
        for c in cuts + [len(b)]:
            pieces.append(b[prev:c])
            prev = c
        pieces = [p for p in pieces if p] or [b""]
        if len(b) == 0:
            return
        self.assertEqual(R.parse_record_pieces(pieces), r)
        head, body = R.encode_record_parts(r)
        self.assertEqual(head + body, b)

    @given(u32, u32, st.binary(max_size=20))
    def test_unchecked_is_the_same_record(self, scid, seqnum, data):
        """data_unchecked builds a record equal to (and hashing like) Data."""
        a, b = R.data_unchecked(scid, seqnum, data), R.Data(scid, seqnum, data)
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))
        self.assertEqual(R.encode_record(a), R.encode_record(b))
