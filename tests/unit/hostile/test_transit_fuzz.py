"""Hypothesis feeds random and mutated record streams to our Transit
record decoder and to a whole TransitConnection (docs/security.md, "Transit"): the only
outcomes are the authentic records in order or a refusal (BadRecord, a
hang-up), and what is buffered stays under the limit."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._transit import _codec
from wormhole._transit._box import MAC_SIZE, NONCE_SIZE
from wormhole._transit._connection import TransitConnection

from ...dilation._streams import split_at
from ...transit.fakes import FakeIO, FakeSelection, FakeSink

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


class ConnectionStreams(unittest.TestCase):
    """The whole receiving TransitConnection, from the first byte."""

    @settings(max_examples=200, deadline=None)
    @given(st.booleans(),
           st.lists(st.binary(max_size=100), max_size=4),
           st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=3),
           st.lists(st.integers(min_value=0), max_size=8))
    def test_any_bytes_from_the_first(self, is_sender, plaintexts, flips, cuts):
        """The peer's handshake (and go), then records, with bytes flipped
        anywhere and split anywhere: the machine never raises; it delivers
        a prefix of the records, or hangs up before its sink hears a
        corrupt one, and reports nothing after hanging up."""
        events = []
        sink = FakeSink(events)
        c = TransitConnection(KEY, is_sender, None, "fuzz")
        c.wire(FakeIO(events), FakeSelection(events, lambda conn: conn.select(sink)))
        c.connection_made()
        theirs = (_codec.receiver_handshake(KEY) if is_sender
                  else _codec.sender_handshake(KEY) + _codec.GO)
        send_key, _ = _codec.record_keys(KEY, not is_sender)
        enc = _codec.RecordEncoder(send_key)
        stream = bytearray(theirs + b"".join(enc.encode(p) for p in plaintexts))
        for pos, x in flips:
            stream[pos % len(stream)] ^= x or 1
        for chunk in split_at(bytes(stream), cuts):
            c.data_received(chunk)
        got = [r for e in events if e[0] == "sink.records" for r in e[1]]
        self.assertEqual(got, plaintexts[:len(got)])
        if ("io.lose",) in events:
            after = events[events.index(("io.lose",)) + 1:]
            self.assertEqual([e for e in after if e[0] in ("sink.records",
                                                          "selection.connection_ready")], [])
        elif not flips:
            self.assertEqual(got, plaintexts)
