"""Hypothesis feeds random and mutated frames and records to our Dilation
receive path (docs/security.md, "Dilation"): whatever arrives, the only outcomes are records
delivered or the connection dropped with a FramingError/RecordError, and
what is buffered stays under its limit."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.python import log
from twisted.trial import unittest

from wormhole._dilation import _records as R
from wormhole._dilation._framing import FrameReader, FramingError
from wormhole._dilation._inbound import (
    DEFAULT_MAX_BACKLOG,
    DEFAULT_MAX_PEER_SUBCHANNELS,
)
from wormhole._dilation._outbound import DEFAULT_MAX_UNACKED

from ...hostile._dilation_peer import connected_pair

LIMIT = 300
u32 = st.integers(min_value=0, max_value=2 ** 32 - 1)
records = st.one_of(
    st.builds(R.Open, st.integers(0, 12), u32, st.text(max_size=8)),
    st.builds(R.Data, st.integers(0, 12), u32, st.binary(max_size=64)),
    st.builds(R.Close, st.integers(0, 12), u32),
    st.builds(R.Ack, u32),
    st.builds(R.Ping, st.binary(min_size=4, max_size=4)),
    st.builds(R.Pong, st.binary(min_size=4, max_size=4)),
    st.just(R.KCM()),
)


class Frames(unittest.TestCase):
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.binary(max_size=700), max_size=8))
    def test_random_stream(self, chunks):
        """Any bytes after the handshake line: frames no longer than the
        limit, or FramingError; never more than one frame's worth kept."""
        r = FrameReader(b"", max_frame=LIMIT, handshake_max=LIMIT)
        try:
            for c in chunks:
                for f in r.add_data(c):
                    self.assertLessEqual(len(f), LIMIT)
                self.assertLessEqual(r.buffered(), LIMIT + 4)
        except FramingError as e:
            self.assertIn("the limit is 300", str(e))

    @settings(max_examples=300, deadline=None)
    @given(st.binary(max_size=40))
    def test_random_plaintext(self, plaintext):
        """Any decrypted plaintext is a record or a RecordError."""
        try:
            r = R.parse_record(plaintext)
        except R.RecordError:
            return
        self.assertEqual(R.encode_record(r), plaintext)


class Records(unittest.TestCase):
    def setUp(self):
        self.logged = []
        log.addObserver(self.logged.append)
        self.addCleanup(log.removeObserver, self.logged.append)

    @settings(max_examples=120, deadline=None)
    @given(st.booleans(), st.lists(st.one_of(records, st.binary(max_size=12)), max_size=30))
    def test_any_records(self, we_lead, items):
        """A keyed peer sends any records (right or wrong ids, seqnums,
        tags, stray KCMs) or undecodable plaintexts: nothing escapes the
        victim's dataReceived, its limits hold, and a broken record drops
        the connection."""
        v, p = connected_pair(we_lead)
        for item in items:
            if v.transport.disconnecting:
                break
            plain = R.encode_record(item) if not isinstance(item, bytes) else item
            v.conn.dataReceived(p.noise.encrypt_frame(plain))
            v.run_eventually()
            self.assertLessEqual(len(v.inbound._peer_opened), DEFAULT_MAX_PEER_SUBCHANNELS)
            self.assertLessEqual(v.inbound.backlog_bytes(), DEFAULT_MAX_BACKLOG + 64)
            self.assertLessEqual(v.outbound.unacked_bytes(), DEFAULT_MAX_UNACKED)
            if isinstance(item, bytes):
                try:
                    R.parse_record(item)
                except R.RecordError:
                    self.assertTrue(v.transport.disconnecting)
