"""L2 framing (Dilation protocol, "L2 protocol", "L2 Message Framing"):
handshake lines, Noise NNpsk0 between a Leader and a Follower, frames
bigger than one Noise packet, arbitrary TCP splits, refusal of bad peers."""

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._dilation import _framing as F
from wormhole._dilation import _records as R

from ...dilation._streams import split_at
from ._noise_pair import KEY, pair


class Constants(unittest.TestCase):
    def test_lines(self):
        """The handshake lines of the Dilation protocol ("L2 protocol"), and
        which one each role sends."""
        self.assertEqual(F.handshake_lines(True),
                         (b"Magic-Wormhole Dilation Handshake v1 Leader\n\n",
                          b"Magic-Wormhole Dilation Handshake v1 Follower\n\n"))
        self.assertEqual(F.handshake_lines(False),
                         tuple(reversed(F.handshake_lines(True))))

    def test_dilation_key(self):
        """The Dilation key is HKDF-SHA256(key, info=dilation-v1, no salt, 32)."""
        want = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=b"dilation-v1").derive(KEY)
        self.assertEqual(F.derive_dilation_key(KEY), want)

    def test_sizes(self):
        """65519 bytes of plaintext per Noise message, 65535 of ciphertext."""
        self.assertEqual((F.NOISE_MAX_PLAINTEXT, F.NOISE_MAX_CIPHERTEXT), (65519, 65535))
        self.assertEqual(F.NOISE_PROTOCOL, b"Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s")


class Frames(unittest.TestCase):
    def test_small_record_layout(self):
        """A 9-byte OPEN becomes 9+16 bytes of Noise inside a 4-byte length:
        29 bytes on the wire, as the example of the Dilation protocol,
        "L2 Message Framing", says."""
        leader, _follower = pair()
        wire = leader.encrypt_frame(b"\x03" + b"\x00" * 8)
        self.assertEqual(len(wire), 29)
        self.assertEqual(wire[:4], b"\x00\x00\x00\x19")

    def test_boundaries(self):
        """Plaintexts at and around multiples of 65519 bytes are cut into
        ceil(n/65519) Noise messages and come back intact."""
        leader, follower = pair()
        reader = F.FrameReader(b"", handshake_max=F.DEFAULT_MAX_FRAME)
        for n in (0, 1, 65518, 65519, 65520, 2 * 65519, 2 * 65519 + 1, 300000):
            pt = bytes(range(256)) * (n // 256) + b"x" * (n % 256)
            wire = leader.encrypt_frame(pt)
            pieces = max(1, -(-n // 65519))
            self.assertEqual(len(wire), 4 + n + 16 * pieces)
            [ct] = reader.add_data(wire)
            self.assertEqual(follower.decrypt_frame(ct), pt)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(min_value=0, max_value=140000), min_size=1, max_size=6),
           st.lists(st.integers(min_value=0), max_size=30))
    def test_any_tcp_split(self, sizes, cuts):
        """Frames of any size, the whole stream cut at arbitrary points
        (including inside the handshake line and length prefixes), decode to
        the same plaintexts in order, in both directions."""
        leader, follower = pair()
        for sender, receiver, line in ((leader, follower, F.LEADER_HANDSHAKE),
                                       (follower, leader, F.FOLLOWER_HANDSHAKE)):
            pts = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
            stream = line + b"".join(sender.encrypt_frame(p) for p in pts)
            reader = F.FrameReader(line, handshake_max=F.DEFAULT_MAX_FRAME)
            got = []
            for chunk in split_at(stream, cuts):
                got.extend(receiver.decrypt_frame(f) for f in reader.add_data(chunk))
            self.assertEqual(got, pts)


class BadPeers(unittest.TestCase):
    def test_wrong_line(self):
        """A wrong handshake line (e.g. an HTTP server) fails at the first
        differing byte, without waiting for the whole line."""
        r = F.FrameReader(F.LEADER_HANDSHAKE)
        self.assertEqual(r.add_data(b"Magic-"), [])
        self.assertRaises(F.FramingError, r.add_data, b"HTTP")

    def test_follower_line_to_follower(self):
        """Two Followers (or two Leaders) refuse each other's line."""
        r = F.FrameReader(F.LEADER_HANDSHAKE)
        self.assertRaises(F.FramingError, r.add_data, F.FOLLOWER_HANDSHAKE)

    def test_wrong_key(self):
        """Peers with different wormhole keys fail the Noise handshake or
        the first transport message: never a silent success."""
        leader = F.NoiseSession(F.derive_dilation_key(KEY), True)
        follower = F.NoiseSession(F.derive_dilation_key(b"\x02" * 32), False)
        r = F.FrameReader(b"")
        [m1] = r.add_data(leader.write_handshake())
        try:
            follower.read_handshake(m1)
            [m2] = r.add_data(follower.write_handshake())
            leader.read_handshake(m2)
            [m3] = r.add_data(follower.encrypt_frame(b"\x00"))
            leader.decrypt_frame(m3)
        except F.FramingError:
            return
        self.fail("mismatched keys were accepted")

    @given(st.integers(min_value=0, max_value=70000 + 31), st.integers(0, 255))
    @settings(max_examples=25, deadline=None)
    def test_tampered(self, where, xor):
        """Flipping any bit of any Noise message of a frame makes
        decryption fail with FramingError."""
        leader, follower = pair()
        wire = bytearray(leader.encrypt_frame(b"z" * 70000))
        ct = bytes(wire[4:])
        tampered = bytearray(ct)
        tampered[where % len(ct)] ^= (xor or 1)
        self.assertRaises(F.FramingError, follower.decrypt_frame, bytes(tampered))

    def test_frame_limit(self):
        """No frame may claim more than 2**32-1 bytes."""
        class Huge(bytes):
            def __len__(self):
                return 2 ** 32
        self.assertRaises(ValueError, F.frame, Huge())


class DecryptRecord(unittest.TestCase):
    """decrypt_record: a frame opened straight into its record, through
    the session's buffer for frames of up to two Noise messages."""

    RECORDS = [R.Data(3, 7, bytes(i % 251 for i in range(n)))
               for n in (0, 1, 65510, 65511, 65536, 2 * 65519 - 9, 2 * 65519 - 8, 300000)] + [
        R.Open(2, 0, "bench"), R.Close(2, 9), R.Ack(12), R.Ping(b"abcd"), R.Pong(b"dcba"),
        R.KCM()]

    def roundtrip(self):
        leader, follower = pair()
        got = []
        for record in self.RECORDS:
            got.append(follower.decrypt_record(leader.encrypt_frame(R.encode_record(record))[4:]))
        self.assertEqual(got, self.RECORDS)
        return got

    def test_every_shape(self):
        """Every kind of record, DATA payloads around one and two Noise
        messages and far above, comes back equal; a payload is not
        changed by the frames opened after it (nothing refers to the
        session's buffer)."""
        got = self.roundtrip()
        self.assertIsInstance(got[4].data, bytes)
        self.assertEqual(got[4].data, bytes(i % 251 for i in range(65536)))

    def test_without_decrypt_into(self):
        """With a `cryptography` that cannot open into a buffer, every
        frame takes the general path, with the same records."""
        self.patch(F, "_HAVE_DECRYPT_INTO", False)
        self.roundtrip()

    def test_refusals(self):
        """A tampered message, a message shorter than its tag, and a
        plaintext that is no record are refused."""
        leader, follower = pair()
        ct = bytearray(leader.encrypt_frame(R.encode_record(R.Data(1, 0, bytes(70000))))[4:])
        ct[-1] ^= 1
        self.assertRaises(F.FramingError, follower.decrypt_record, bytes(ct))
        leader, follower = pair()
        ct = leader.encrypt_frame(R.encode_record(R.Data(1, 0, bytes(70000))))[4:]
        self.assertRaises(F.FramingError, follower.decrypt_record, ct[:65535 + 10])
        leader, follower = pair()
        self.assertRaises(R.RecordError, follower.decrypt_record,
                          leader.encrypt_frame(b"\x7f")[4:])


class SameAsNoisePackage(unittest.TestCase):
    def test_transport_messages(self):
        """Our transport encryption (ChaChaPoly run directly after the
        handshake) produces and accepts exactly the noise package's own
        transport messages, across several pieces and nonces."""
        from noise.connection import NoiseConnection
        key = F.derive_dilation_key(KEY)
        ours = F.NoiseSession(key, True)
        raw = NoiseConnection.from_name(F.NOISE_PROTOCOL)
        raw.set_psks(psk=key)
        raw.set_as_responder()
        raw.start_handshake()
        r = F.FrameReader(b"")
        [m1] = r.add_data(ours.write_handshake())
        raw.read_message(bytes(m1))
        ours.read_handshake(bytes(raw.write_message()))
        for size in (0, 10, 65519, 70000, 140000):
            pt = bytes(i % 253 for i in range(size))
            wire = ours.encrypt_frame(pt)
            ct = wire[4:]
            got = b"".join(bytes(raw.decrypt(ct[i:i + 65535])) for i in range(0, len(ct), 65535))
            self.assertEqual(got, pt)
            back = bytes(raw.encrypt(pt[:65519]))
            self.assertEqual(ours.decrypt_frame(back), pt[:65519])

    def test_parts_equal_whole(self):
        """encrypt_parts(head, body) is the frame of head + body."""
        a1, b1 = pair()
        a2, _b2 = pair()
        head, body = b"\x04" + b"\x00" * 8, bytes(200000)
        p1 = b"".join(a1.encrypt_parts(head, body))
        self.assertEqual(b1.decrypt_frame(p1[4:]), head + body)
        self.assertEqual(len(p1), len(a2.encrypt_frame(head + body)))


class Limits(unittest.TestCase):
    """Every length is checked before anything of its frame is kept
    (docs/security.md, "Dilation")."""

    def test_handshake_frame_limit(self):
        """The first frame (the peer's Noise handshake message) may hold
        1024 bytes; a larger announced length fails as soon as its 4 bytes
        arrive, with no byte of the frame buffered."""
        import struct
        r = F.FrameReader(F.LEADER_HANDSHAKE)
        r.add_data(F.LEADER_HANDSHAKE + struct.pack(">L", 2 ** 31)[:2])
        e = self.assertRaises(F.FramingError, r.add_data, struct.pack(">L", 2 ** 31)[2:])
        self.assertEqual(str(e), "peer announced a handshake frame of 2147483648 bytes; "
                                 "the limit is 1024 (docs/security.md)")
        self.assertLessEqual(r.buffered(), 4)
        ok = F.FrameReader(b"")
        self.assertEqual([bytes(x) for x in ok.add_data(struct.pack(">L", 1024) + bytes(1024))],
                         [bytes(1024)])

    def test_frame_limit_after_handshake(self):
        """After the handshake frame, frames up to max_frame (16 MiB by
        default) pass, one byte more fails before it is buffered, whether
        the length arrives whole or split across reads."""
        import struct
        self.assertEqual(F.DEFAULT_MAX_FRAME, 16 * 1024 * 1024)
        hs = struct.pack(">L", 48) + bytes(48)
        for split in (0, 1, 3):
            r = F.FrameReader(b"", max_frame=100000)
            self.assertEqual(len(r.add_data(hs)), 1)
            ok = struct.pack(">L", 100000)
            r.add_data(ok[:split])
            self.assertEqual(r.add_data(ok[split:] + bytes(99999)), [])
            self.assertEqual([len(x) for x in r.add_data(b"\x00")], [100000])
            bad = struct.pack(">L", 100001)
            r.add_data(bad[:split])
            e = self.assertRaises(F.FramingError, r.add_data, bad[split:] + bytes(10))
            self.assertIn("frame of 100001 bytes; the limit is 100000", str(e))


class ReaderSplits(unittest.TestCase):
    def test_every_step_size(self):
        """Frames of 0..6 and 300 bytes, fed 1..9 bytes at a time (so length
        prefixes split at every offset), and a big frame followed by small
        ones in the same read, all come out intact and in order."""
        import struct
        frames = [bytes([i]) * n for i, n in enumerate([0, 1, 2, 3, 4, 5, 6, 300])]
        stream = b"".join(struct.pack(">L", len(f)) + f for f in frames)
        for step in range(1, 10):
            r = F.FrameReader(b"")
            got = []
            for i in range(0, len(stream), step):
                got += [bytes(x) for x in r.add_data(stream[i:i + step])]
            self.assertEqual(got, frames, step)
        big = bytes(200000)
        stream = struct.pack(">L", len(big)) + big + b"".join(
            struct.pack(">L", len(f)) + f for f in frames)
        r = F.FrameReader(b"", handshake_max=F.DEFAULT_MAX_FRAME)
        got = [bytes(x) for x in r.add_data(stream[:70000])]
        got += [bytes(x) for x in r.add_data(stream[70000:])]
        self.assertEqual(got, [big] + frames)
