"""The sans-I/O codecs against the golden vectors of P2P-D8.1, with
Hypothesis round trips for every codec."""

import hashlib
import math

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import _compression, _framing, _hybrid, _keys, _message, _payload
from p2pmesh._config import SubnetConfig, ell_max

from ...p2p._fixtures import load_vectors, test_keys

GOLDEN = load_vectors("golden.json")


class KeysAndAddresses(SynchronousTestCase):

    def test_prefix_2048(self):
        """The canonical 2048 prefix is the 33 bytes written in P2P-D1.2."""
        self.assertEqual(
            _keys.PREFIXES[2048].hex(),
            "30820122300d06092a864886f70d0101010500"
            "0382010f003082010a0282010100")

    def test_prefix_lengths_3072_4096(self):
        """3072 and 4096 change only the four lengths (P2P-D1.2)."""
        for beta, lengths in ((3072, ("01a2", "018f", "018a", "0181")),
                              (4096, ("0222", "020f", "020a", "0201"))):
            p = _keys.PREFIXES[beta].hex()
            self.assertEqual(
                (p[4:8], p[42:46], p[52:56], p[60:64]), lengths)

    def test_test_keys_canonical(self):
        """The committed keys are canonical, D = 294 bytes."""
        for private, der in test_keys().values():
            _keys.check_canonical(der, 2048)
            self.assertEqual(len(der), 294)
            self.assertEqual(_keys.public_der(private), der)

    def test_non_canonical_refused(self):
        """A wrong length, prefix, exponent or a modulus without its top
        bit are refused."""
        der = test_keys()["A"][1]
        bad = [der[:-1], b"\x31" + der[1:], der[:-3] + b"\x01\x00\x03",
               der[:33] + bytes([der[33] & 0x7F]) + der[34:]]
        for b in bad:
            self.assertRaises(_keys.NonCanonicalKey,
                              _keys.check_canonical, b, 2048)
        self.assertRaises(_keys.NonCanonicalKey,
                          _keys.check_canonical, der, 3072)

    def test_truncated_addresses(self):
        """Key A's address for τ 256/160/16 and b"key"'s value address are
        the low τ bits of SHA-256 (P2P-D1.3, 1.4)."""
        v = GOLDEN["truncated_addresses"]
        der = test_keys()["A"][1]
        self.assertEqual(hashlib.sha256(der).hexdigest(), v["A_sha256"])
        for tau, key in ((256, "A_tau256"), (160, "A_tau160"),
                         (16, "A_tau16")):
            self.assertEqual(_keys.truncated_address(der, tau),
                             int(v[key], 16))
        self.assertEqual(_keys.value_address(b"key", 256),
                         int(v["key_tau256"], 16))

    def test_ell_max(self):
        """ℓmax(20, 256) = 5072, (20, 160) = 3152, (4, 16) = 62 (P2P-D6.4)."""
        for k, tau, expected in GOLDEN["ell_max"]:
            self.assertEqual(ell_max(k, tau), expected)

    def test_subnet_config_refuses_ell_over_max(self):
        """ℓ > ℓmax is refused at start (P2P-D6.4)."""
        SubnetConfig(k=4, tau=16, ell=62)
        self.assertRaises(ValueError, SubnetConfig, k=4, tau=16, ell=63)
        self.assertRaises(ValueError, SubnetConfig, beta=1024)
        self.assertRaises(ValueError, SubnetConfig, description="x")

    def test_bucket_index(self):
        """bucket = bit_length(distance) − 1."""
        self.assertEqual(_keys.bucket_index(0b1000, 0b0001), 3)
        self.assertEqual(_keys.bucket_index(5, 5), -1)

    def test_change_key_proof(self):
        """The proof verifies only for (current, new) signed by new."""
        (a, der_a), (b, der_b) = test_keys()["A"], test_keys()["B"]
        proof = _keys.change_key_proof(b, der_a, der_b)
        self.assertTrue(_keys.check_change_key_proof(der_a, der_b, proof))
        self.assertFalse(_keys.check_change_key_proof(der_b, der_a, proof))
        wrong = _keys.change_key_proof(a, der_a, der_b)
        self.assertFalse(_keys.check_change_key_proof(der_a, der_b, wrong))


class TransmissionFraming(SynchronousTestCase):

    def test_golden_headers(self):
        """The headers of P2P-D8.1: accepted ones parse to (method, length),
        reserved bits are a framing error."""
        for vec in GOLDEN["transmission_headers"]:
            header = bytes.fromhex(vec["hex"])
            dec = _framing.TransmissionDecoder(16 << 20)
            if vec["ok"]:
                body = b"x" * vec["length"]
                self.assertEqual(dec.feed(header + body),
                                 [(vec["method"], body)])
                self.assertEqual(
                    _framing.encode_transmission(vec["method"], body)[:6],
                    header)
            else:
                self.assertRaises(_framing.FramingError, dec.feed, header)

    def test_oversize_refused_before_body(self):
        """An oversize length is refused as soon as the header arrives."""
        dec = _framing.TransmissionDecoder(100)
        self.assertRaises(_framing.FramingError, dec.feed,
                          bytes.fromhex("000000000065"))

    def test_split_across_feeds(self):
        """Bytes arriving one at a time give the same transmission."""
        data = _framing.encode_transmission(4, b"abc")
        dec = _framing.TransmissionDecoder(100)
        out = []
        for i in range(len(data)):
            out += dec.feed(data[i:i + 1])
        self.assertEqual(out, [(4, b"abc")])

    @settings(deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 7), st.binary(max_size=300)),
                    max_size=5),
           st.integers(1, 50))
    def test_round_trip(self, transmissions, chunk):
        """Any transmissions, cut anywhere, decode to themselves."""
        data = b"".join(_framing.encode_transmission(m, b)
                        for m, b in transmissions)
        dec = _framing.TransmissionDecoder(1000)
        out = []
        for i in range(0, len(data), chunk):
            out += dec.feed(data[i:i + chunk])
        self.assertEqual(out, transmissions)
        self.assertEqual(dec.pending(), 0)


class Compression(SynchronousTestCase):

    def test_golden_bodies(self):
        """The committed compressed bodies decode to the plain body."""
        v = GOLDEN["compressed_bodies"]
        plain = bytes.fromhex(v["plain_hex"])
        for method in (1, 2, 3, 4, 5):
            self.assertEqual(_compression.decompress(
                method, bytes.fromhex(v[str(method)]), 1 << 20), plain)

    def test_bombs_refused(self):
        """Every method refuses a body that inflates past the maximum."""
        zeros = b"\0" * 200000
        for method in _compression.available():
            bomb = _compression.compress(method, zeros)
            self.assertLess(len(bomb), 20000)
            self.assertRaises(_compression.CompressionError,
                              _compression.decompress, method, bomb, 100000)

    def test_garbage_and_trailing_refused(self):
        """Undecodable bodies, two gzip members and trailing bytes fail."""
        for method in _compression.available():
            self.assertRaises(_compression.CompressionError,
                              _compression.decompress, method,
                              b"\xff" * 40, 1000)
        member = _compression.compress(_compression.GZIP, b"a")
        self.assertRaises(_compression.CompressionError,
                          _compression.decompress, _compression.GZIP,
                          member + member, 1000)
        z = _compression.compress(_compression.ZLIB, b"a") + b"x"
        self.assertRaises(_compression.CompressionError,
                          _compression.decompress, _compression.ZLIB, z, 1000)

    def test_all_methods_available(self):
        """This build decodes all five methods (lzma and snappy probed)."""
        self.assertEqual(set(_compression.available()), {1, 2, 3, 4, 5})

    @settings(max_examples=40, deadline=None)
    @given(st.sampled_from([0, 1, 2, 3, 4, 5]), st.binary(max_size=4000))
    def test_round_trip(self, method, body):
        """compress then decompress is the identity for every method."""
        self.assertEqual(_compression.decompress(
            method, _compression.compress(method, body), 4000), body)


class Payloads(SynchronousTestCase):

    def test_accepted(self):
        """The accept list of P2P-D8.1 decodes (float32 as a double)."""
        for vec in GOLDEN["msgpack_accept"]:
            _payload.unpack(bytes.fromhex(vec["hex"]))
        self.assertEqual(_payload.unpack(bytes.fromhex("ca3fc00000")), 1.5)
        self.assertEqual(_payload.unpack(bytes.fromhex("d38000000000000000")),
                         -2 ** 63)
        self.assertTrue(math.isnan(_payload.unpack(
            bytes.fromhex("cb7ff8000000000000"))))

    def test_refused(self):
        """The refuse list of P2P-D8.1 raises Malformed, each of them."""
        for vec in GOLDEN["msgpack_refuse"]:
            try:
                _payload.unpack(bytes.fromhex(vec["hex"]))
            except _payload.Malformed:
                continue
            self.fail("accepted: %s" % vec["what"])

    def test_node_info_vector(self):
        """[9, [b"k", "127.0.0.1", 4000]] packs as written in P2P-D5.4."""
        self.assertEqual(_payload.pack([9, [b"k", "127.0.0.1", 4000]]).hex(),
                         GOLDEN["node_info"]["hex"])

    def test_pack_sorts_keys_and_refuses(self):
        """Map keys are sorted; out-of-range ints cannot be sent."""
        self.assertEqual(_payload.pack({"b": 1, "a": 2}),
                         msgpack.packb({"a": 2, "b": 1}))
        self.assertRaises(_payload.Malformed, _payload.pack, 2 ** 64)
        self.assertRaises(_payload.Malformed, _payload.pack, {1: 2})

    @settings(deadline=None)
    @given(st.recursive(
        st.none() | st.booleans() | st.floats(allow_nan=False)
        | st.integers(-2 ** 63, 2 ** 64 - 1) | st.text() | st.binary(),
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.text(), children, max_size=4),
        max_leaves=20))
    def test_round_trip(self, value):
        """Every allowed value survives pack/unpack."""
        self.assertEqual(_payload.unpack(_payload.pack(value)), value)


class Messages(SynchronousTestCase):

    def test_golden_ping(self):
        """A→B PING nil: bytes S..S+6 = 00000001 2000, then From A, To B,
        payload c0; the signature verifies (P2P-D2.5)."""
        keys = test_keys()
        raw = bytes.fromhex(GOLDEN["ping_A_to_B"]["hex"])
        self.assertEqual(raw[256:262].hex(), "000000012000")
        self.assertEqual(_message.header_length(2048), 850)
        (msg,) = _message.split_messages(raw, 2048)
        self.assertEqual((msg.opcode, msg.encrypted, msg.reserved),
                         (2, False, 0))
        self.assertEqual(msg.sender, keys["A"][1])
        self.assertEqual(msg.recipient, keys["B"][1])
        self.assertEqual(msg.payload, b"\xc0")
        _message.check_message(msg, 2048)

    def test_encoder_matches_all_but_signature(self):
        """Our encoder gives the golden bytes except the random PSS salt."""
        keys = test_keys()
        golden = bytes.fromhex(GOLDEN["ping_A_to_B"]["hex"])
        ours = _message.encode_message(keys["A"][0], keys["A"][1],
                                       keys["B"][1], 2, b"\xc0")
        self.assertEqual(ours[256:], golden[256:])
        self.assertNotEqual(ours[:256], golden[:256])

    def test_bit_flip_fails_signature(self):
        """Any flipped bit after the signature fails verification."""
        raw = bytearray.fromhex(GOLDEN["ping_A_to_B"]["hex"])
        raw[-1] ^= 1
        (msg,) = _message.split_messages(bytes(raw), 2048)
        self.assertRaises(_message.BadSignature, _message.check_message,
                          msg, 2048)

    def test_partial_message_is_framing_error(self):
        """A body that is not whole (header, payload) pairs is refused."""
        raw = bytes.fromhex(GOLDEN["ping_A_to_B"]["hex"])
        for body in (raw[:-1], raw + raw[:10], b""):
            self.assertRaises(_framing.FramingError,
                              _message.split_messages, body, 2048)

    def test_reserved_bits_read(self):
        """Reserved header bits are reported, not hidden (P2P-D2.5)."""
        keys = test_keys()
        raw = bytearray(_message.encode_message(
            keys["A"][0], keys["A"][1], keys["B"][1], 2, b"\xc0"))
        raw[261] |= 2
        (msg,) = _message.split_messages(bytes(raw), 2048)
        self.assertEqual(msg.reserved, 1)

    @settings(max_examples=15, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 15), st.booleans(),
                              st.binary(max_size=200)), min_size=1,
                    max_size=4))
    def test_round_trip(self, specs):
        """Messages batched in one body split back to what was signed."""
        keys = test_keys()
        raws = [_message.encode_message(keys["A"][0], keys["A"][1],
                                        keys["C"][1], op, payload, enc)
                for op, enc, payload in specs]
        msgs = _message.split_messages(b"".join(raws), 2048)
        self.assertEqual([(m.opcode, m.encrypted, m.payload, m.raw)
                          for m in msgs],
                         [(op, enc, p, r) for (op, enc, p), r
                          in zip(specs, raws, strict=False)])
        for m in msgs:
            _message.check_message(m, 2048)


class HybridEncryption(SynchronousTestCase):

    def _golden(self):
        raw = bytes.fromhex(GOLDEN["whisper_A_to_B"]["hex"])
        (msg,) = _message.split_messages(raw, 2048)
        return raw, msg

    def test_golden_whisper_decrypts(self):
        """B decrypts the committed WHISPER; its flags are 80 01 and
        L = β/8 + 28 + plaintext (P2P-D4.1)."""
        raw, msg = self._golden()
        v = GOLDEN["whisper_A_to_B"]
        self.assertEqual(raw[260:262].hex(), "8001")
        self.assertEqual(len(msg.payload), v["length"])
        plain = _hybrid.decrypt(test_keys()["B"][0], msg.payload,
                                msg.associated_data)
        self.assertEqual(plain.hex(), v["plaintext_hex"])

    def test_bit_flips_fail(self):
        """A flip in W, N, C or the header AD fails decryption."""
        raw, msg = self._golden()
        b = test_keys()["B"][0]
        for offset in (0, 256, 256 + 12, len(msg.payload) - 1):
            bad = bytearray(msg.payload)
            bad[offset] ^= 1
            self.assertRaises(_hybrid.Undecryptable, _hybrid.decrypt, b,
                              bytes(bad), msg.associated_data)
        ad = bytearray(msg.associated_data)
        ad[10] ^= 1
        self.assertRaises(_hybrid.Undecryptable, _hybrid.decrypt, b,
                          msg.payload, bytes(ad))

    def test_resigned_by_c_fails(self):
        """C strips A's signature and re-signs as From = C: the AD changed,
        so B cannot decrypt (P2P-D4.2)."""
        raw, msg = self._golden()
        keys = test_keys()
        forged = _message.encode_message(keys["C"][0], keys["C"][1],
                                         keys["B"][1], 8, msg.payload, True)
        (fmsg,) = _message.split_messages(forged, 2048)
        _message.check_message(fmsg, 2048)
        self.assertRaises(_hybrid.Undecryptable, _hybrid.decrypt,
                          keys["B"][0], fmsg.payload, fmsg.associated_data)

    def test_wrong_recipient_fails(self):
        """Only the To key decrypts."""
        raw, msg = self._golden()
        self.assertRaises(_hybrid.Undecryptable, _hybrid.decrypt,
                          test_keys()["C"][0], msg.payload,
                          msg.associated_data)

    @settings(max_examples=10, deadline=None)
    @given(st.binary(max_size=2000), st.binary(max_size=30))
    def test_round_trip(self, plaintext, ad):
        """encrypt then decrypt is the identity."""
        import os
        keys = test_keys()
        payload = _hybrid.encrypt(keys["B"][1], plaintext, ad, os.urandom)
        self.assertEqual(len(payload), 256 + 28 + len(plaintext))
        self.assertEqual(_hybrid.decrypt(keys["B"][0], payload, ad),
                         plaintext)
