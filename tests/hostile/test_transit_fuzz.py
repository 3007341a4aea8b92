"""Hypothesis feeds random and mutated record streams to our Transit
record decoder (issue 11): the only outcomes are the authentic records in
order or BadRecord, and what is buffered stays under the limit."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._transit import _codec
from wormhole._transit._box import MAC_SIZE, NONCE_SIZE

from ..dilation.test_framing import split_at

KEY = bytes(range(32))
LIMIT = 200


class RecordStreams(unittest.TestCase):
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.binary(max_size=300), max_size=6),
           st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=4),
           st.lists(st.integers(min_value=0), max_size=8))
    def test_mutated_stream(self, plaintexts, flips, cuts):
        """Records of any size (some over the limit), bytes flipped
        anywhere, the stream split anywhere: the decoder yields a prefix of
        the records sent (each within the limit) and then at most one
        BadRecord, never buffering more than one frame under the limit."""
        enc = _codec.RecordEncoder(KEY)
        stream = bytearray(b"".join(enc.encode(p) for p in plaintexts))
        for pos, x in flips:
            if stream:
                stream[pos % len(stream)] ^= x
        dec = _codec.RecordDecoder(KEY, max_record=LIMIT)
        got = []
        try:
            for chunk in split_at(bytes(stream), cuts):
                got.extend(dec.feed(chunk))
                self.assertLessEqual(dec.buffered(), 4 + LIMIT + NONCE_SIZE + MAC_SIZE)
        except _codec.BadRecord as e:
            got.extend(e.records)
            self.assertRaises(_codec.BadRecord, dec.feed, b"more")
        self.assertEqual(got, plaintexts[:len(got)])
        self.assertTrue(all(len(r) <= LIMIT for r in got))

    @settings(max_examples=300, deadline=None)
    @given(st.binary(max_size=500))
    def test_random_bytes(self, data):
        """Bytes that were never a record: BadRecord or nothing yet."""
        dec = _codec.RecordDecoder(KEY, max_record=LIMIT)
        try:
            self.assertEqual(dec.feed(data), [])
        except _codec.BadRecord:
            return
        self.assertLessEqual(dec.buffered(), 4 + LIMIT + NONCE_SIZE + MAC_SIZE)
