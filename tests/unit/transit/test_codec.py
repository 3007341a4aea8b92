"""The sans-I/O codec: constants against the reference's wire bytes, and
the record framer under hypothesis (Transit protocol, "Records",
"Handshake", "Relay")."""

import json
import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._transit import _codec

from ..._paths import REPO_ROOT

# recorded from the reference by tests/transit/vectors.py (which runs it:
# checked by tests/transit/test_codec_live.py)
VECTORS = os.path.join(REPO_ROOT, "tests", "data", "transit_vectors.json")

with open(VECTORS) as _f:
    V = json.load(_f)
KEY = bytes.fromhex(V["key"])


class KnownAnswers(unittest.TestCase):
    """Our codec against bytes the reference 0.24 wrote on the wire."""

    def test_sender_handshake(self):
        """SENDER-HANDSHAKE matches the reference's (HKDF context transit_sender)."""
        self.assertEqual(_codec.sender_handshake(KEY), V["sender_handshake"].encode())

    def test_receiver_handshake(self):
        """RECEIVER-HANDSHAKE matches the reference's (context transit_receiver)."""
        self.assertEqual(_codec.receiver_handshake(KEY), V["receiver_handshake"].encode())

    def test_relay_line(self):
        """The relay line: token from transit_relay_token, then 'for side'
        and 16 hex digits, newline-terminated, exactly like the reference's."""
        side = V["relay_side_example"]
        self.assertRegex(side, r"^[0-9a-f]{16}$")
        expected = V["relay_line_template"].format(token=V["relay_token"], side=side)
        self.assertEqual(_codec.relay_handshake(KEY, side), expected.encode())

    def test_go(self):
        """The sender's go line is the reference's."""
        self.assertEqual(_codec.GO, V["go"].encode())

    def test_record_frames_encode(self):
        """Our frames for counters 0 and 1, in each direction, are
        byte-identical to the reference's: 4-byte big-endian length, the
        counter as a 24-byte big-endian nonce, SecretBox under the
        direction's key."""
        for is_sender, name in ((True, "sender"), (False, "receiver")):
            send_key, _ = _codec.record_keys(KEY, is_sender)
            enc = _codec.RecordEncoder(send_key)
            for r in [r for r in V["records"] if r["from"] == name]:
                self.assertEqual(enc.encode(bytes.fromhex(r["plaintext"])).hex(), r["frame"])

    def test_record_frames_decode(self):
        """We decode the reference's frames as the other role."""
        for is_sender, name in ((False, "sender"), (True, "receiver")):
            _, receive_key = _codec.record_keys(KEY, is_sender)
            dec = _codec.RecordDecoder(receive_key)
            frames = b"".join(bytes.fromhex(r["frame"]) for r in V["records"] if r["from"] == name)
            self.assertEqual(dec.feed(frames),
                             [bytes.fromhex(r["plaintext"]) for r in V["records"]
                              if r["from"] == name])

    def test_nonce_layout(self):
        """The nonce is the record counter, 24 bytes big-endian."""
        frame = bytes.fromhex(V["records"][1]["frame"])
        self.assertEqual(frame[4:28], _codec.nonce_for(1))
        self.assertEqual(_codec.nonce_for(1), b"\0" * 23 + b"\x01")


class Expect(unittest.TestCase):
    def test_byte_by_byte(self):
        """A token arriving one byte at a time matches at the last byte."""
        e = _codec.Expect(b"go\n")
        self.assertEqual(e.feed(b"g"), (None, b""))
        self.assertEqual(e.feed(b"o"), (None, b""))
        self.assertEqual(e.feed(b"\n"), (True, b""))

    def test_leftover(self):
        """Bytes after the token are handed back for the next layer."""
        self.assertEqual(_codec.Expect(b"ok\n").feed(b"ok\nrest"), (True, b"rest"))

    def test_wrong_byte_fails_at_once(self):
        """The first differing byte fails, without waiting for the rest."""
        e = _codec.Expect(b"transit receiver abc ready\n\n")
        self.assertEqual(e.feed(b"transit"), (None, b""))
        self.assertEqual(e.feed(b" sender"), (False, b""))

    @given(st.binary(min_size=1, max_size=80), st.data())
    def test_any_split(self, token, data):
        """Any split of token+tail matches once, with the tail as leftover."""
        tail = data.draw(st.binary(max_size=20))
        stream = token + tail
        cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=5)))
        pieces = [stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)], strict=False)]
        e = _codec.Expect(token)
        for i, p in enumerate(pieces):  # noqa: B007  i is read after the loop
            matched, leftover = e.feed(p)
            if matched is not None:
                break
        self.assertIs(matched, True)
        self.assertEqual(leftover + b"".join(pieces[i + 1:]), tail)


records = st.lists(st.binary(max_size=300), max_size=8)


def _split(stream, cuts):
    cuts = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)], strict=False)]


class Framing(unittest.TestCase):
    @settings(max_examples=200)
    @given(records, st.lists(st.integers(0, 10 ** 6), max_size=12))
    def test_any_split_same_records(self, rs, cuts):
        """However the byte stream is cut, the decoder yields the same
        records in the same order."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        stream = b"".join(enc.encode(r) for r in rs)
        dec = _codec.RecordDecoder(key)
        got = []
        for piece in _split(stream, cuts):
            got.extend(dec.feed(piece))
        self.assertEqual(got, rs)

    @given(st.lists(st.binary(max_size=50), min_size=1, max_size=5), st.data())
    def test_tampered_byte_rejected(self, rs, data):
        """Flipping any bit of a frame body (nonce, ciphertext or MAC)
        raises BadRecord carrying the records before it; the decoder
        refuses everything after."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        frames = [enc.encode(r) for r in rs]
        i = data.draw(st.integers(0, len(frames) - 1))
        pos = data.draw(st.integers(4, len(frames[i]) - 1))
        bit = data.draw(st.integers(0, 7))
        bad = bytearray(frames[i])
        bad[pos] ^= 1 << bit
        frames[i] = bytes(bad)
        dec = _codec.RecordDecoder(key)
        e = self.assertRaises(_codec.BadRecord, dec.feed, b"".join(frames))
        # the good records before it are still handed over, nothing after
        self.assertEqual(e.records, rs[:i])
        self.assertRaises(_codec.BadRecord, dec.feed, b"")

    @given(st.lists(st.binary(max_size=50), min_size=2, max_size=6), st.data())
    def test_reordered_or_dropped_rejected(self, rs, data):
        """A frame that is not the next in sequence (a swap, a loss or a
        replay) raises BadRecord (Transit protocol, "Records")."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        frames = [enc.encode(r) for r in rs]
        i = data.draw(st.integers(0, len(frames) - 1))
        j = data.draw(st.integers(0, len(frames) - 1).filter(lambda j: j != i))
        dec = _codec.RecordDecoder(key)
        for f in frames[:i]:
            dec.feed(f)
        self.assertRaises(_codec.BadRecord, dec.feed, frames[j])

    def test_wrong_direction_key(self):
        """A frame reflected back to its sender does not decrypt: each
        direction has its own key."""
        key = os.urandom(32)
        s_send, s_recv = _codec.record_keys(key, True)
        r_send, r_recv = _codec.record_keys(key, False)
        self.assertEqual((s_send, s_recv), (r_recv, r_send))
        frame = _codec.RecordEncoder(s_send).encode(b"x")
        self.assertRaises(_codec.BadRecord, _codec.RecordDecoder(s_recv).feed, frame)

    def test_short_frame(self):
        """A frame too short to hold a nonce and MAC is refused."""
        self.assertRaises(_codec.BadRecord, _codec.RecordDecoder(os.urandom(32)).feed,
                          b"\0\0\0\x05hello")

    def test_relay_side_checked(self):
        """The relay side must be 16 lower-case hex digits."""
        self.assertRaises(ValueError, _codec.relay_handshake, KEY, "not-hex-at-all!!")
        self.assertTrue(re.match(rb"please relay [0-9a-f]{64} for side 0123456789abcdef\n$",
                                 _codec.relay_handshake(KEY, "0123456789abcdef")))


class LargeRecords(unittest.TestCase):
    def test_bulk_sizes_any_read_size(self):
        """64 KiB records (what the CLI sends) come out whole and in order
        whether the socket hands over less than a frame, exactly one, or
        several frames and a piece at a time; the partial-frame buffer
        is empty at each frame boundary."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        rs = [os.urandom(65536) for _ in range(5)] + [b"", os.urandom(7)]
        stream = b"".join(enc.encode(r) for r in rs)
        for step in (1000, 65536, 65536 + 44, 200_000, len(stream)):
            dec = _codec.RecordDecoder(key)
            got = []
            for i in range(0, len(stream), step):
                got.extend(dec.feed(stream[i:i + step]))
            self.assertEqual(got, rs)
            self.assertEqual(len(dec._buf), 0)

    def test_buffer_types(self):
        """Records may be bytes, bytearray or memoryview; the frame is the
        same."""
        key = os.urandom(32)
        frames = [_codec.RecordEncoder(key).encode(t(b"abc"))
                  for t in (bytes, bytearray, memoryview)]
        self.assertEqual(len(set(frames)), 1)
        self.assertEqual(_codec.RecordDecoder(key).feed(bytearray(frames[0])), [b"abc"])


class Batches(unittest.TestCase):
    @settings(max_examples=100)
    @given(st.lists(records, max_size=5))
    def test_encode_many_is_encode_joined(self, batches):
        """encode_many gives the bytes of encode record by record, joined,
        with the counter running on across batches (and across single
        encodes between them); the decoder yields every record in order."""
        key = os.urandom(32)
        one, many = _codec.RecordEncoder(key), _codec.RecordEncoder(key)
        expected, got = [], []
        for batch in batches:
            expected.append(b"".join(one.encode(r) for r in batch))
            got.append(many.encode_many(batch))
            expected.append(one.encode(b"between"))
            got.append(many.encode(b"between"))
        self.assertEqual(got, expected)
        decoded = _codec.RecordDecoder(key).feed(b"".join(got))
        self.assertEqual(decoded, [r for batch in batches for r in batch + [b"between"]])

    def test_reused_buffer_grows_and_returns_bytes(self):
        """A larger batch after a smaller one still comes out whole, and
        every result is its own bytes (the scratch buffer is reused, so a
        returned batch must not change when the next one is sealed)."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        small = enc.encode_many([b"a", b"b"])
        kept = bytes(small)
        big = enc.encode_many([os.urandom(65536) for _ in range(4)])
        self.assertIsInstance(small, bytes)
        self.assertEqual(small, kept)
        rs = _codec.RecordDecoder(key).feed(small + big)
        self.assertEqual([len(r) for r in rs], [1, 1] + [65536] * 4)

    def test_encode_many_checks_each_record(self):
        """Text among the records is refused before anything is sealed:
        the counter does not move."""
        key = os.urandom(32)
        enc = _codec.RecordEncoder(key)
        self.assertRaises(TypeError, enc.encode_many, [b"ok", "text"])
        self.assertEqual(_codec.RecordDecoder(key).feed(enc.encode_many([b"x"])), [b"x"])


class PublicBindingsFallback(unittest.TestCase):
    def test_same_frames_without_the_cffi_module(self):
        """Without PyNaCl's cffi module (``_box._lib`` None) the public
        bindings produce byte-identical frames and decode them, forged
        ones included."""
        from wormhole._transit import _box
        key = os.urandom(32)
        records = [b"", b"x", os.urandom(70000)]
        enc = _codec.RecordEncoder(key)
        fast = b"".join(enc.encode(r) for r in records)
        self.patch(_box, "_lib", None)
        enc = _codec.RecordEncoder(key)
        slow = b"".join(enc.encode(r) for r in records)
        self.assertEqual(slow, fast)
        self.assertEqual(_codec.RecordEncoder(key).encode_many(records), fast)
        self.assertEqual(_codec.RecordDecoder(key).feed(slow), records)
        bad = bytearray(slow)
        bad[-1] ^= 1
        e = self.assertRaises(_codec.BadRecord, _codec.RecordDecoder(key).feed, bytes(bad))
        self.assertEqual(e.records, records[:2])
