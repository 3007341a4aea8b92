"""wormhole._crypto: key derivation, SecretBox, PAKE bodies, version codec
(Client-to-client protocol)."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole import _crypto
from wormhole._crypto import (
    DecryptError,
    MalformedPakeError,
    PakeError,
    decode_pake_body,
    decode_version,
    decrypt_data,
    derive_key,
    derive_phase_key,
    derive_verifier,
    encode_pake_body,
    encode_version,
    encrypt_data,
    finish_pake,
    make_pake,
)
from wormhole.util import dict_to_bytes

SETTINGS = settings(max_examples=100, deadline=None)
keys = st.binary(min_size=32, max_size=32)
# sides and phases on the wire are ASCII (hex sides; "pake", "version", digits)
wire_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)


def fixed_entropy(seed):
    """A deterministic entropy_f for make_pake."""

    def entropy_f(n):
        return bytes((seed + i) % 256 for i in range(n))

    return entropy_f


class DeriveKey(unittest.TestCase):
    def test_length(self):
        """derive_key returns as many bytes as asked for, 32 by default."""
        self.assertEqual(len(derive_key(b"k" * 32, b"p")), 32)
        self.assertEqual(len(derive_key(b"k" * 32, b"p", 64)), 64)
        self.assertEqual(len(derive_key(b"k" * 32, b"p", 16)), 16)

    def test_purpose_separates(self):
        """Different purposes give unrelated keys; the same purpose, the same key."""
        k = b"\x01" * 32
        self.assertNotEqual(derive_key(k, b"a"), derive_key(k, b"b"))
        self.assertEqual(derive_key(k, b"a"), derive_key(k, b"a"))

    def test_refuses_text(self):
        """A str purpose or key is a TypeError, not a silently different key."""
        self.assertRaises(TypeError, derive_key, b"k" * 32, "purpose")
        self.assertRaises(TypeError, derive_key, "k" * 32, b"purpose")

    def test_verifier(self):
        """The verifier is derive_key(key, b"wormhole:verifier") (Client API, "Verifier")."""
        k = b"\x02" * 32
        self.assertEqual(derive_verifier(k), derive_key(k, b"wormhole:verifier"))


class PhaseKeys(unittest.TestCase):
    @SETTINGS
    @given(keys, wire_text, wire_text, wire_text, wire_text)
    def test_differ_by_side_and_phase(self, key, side1, phase1, side2, phase2):
        """Phase keys differ whenever side or phase differ, and are stable otherwise."""
        k1 = derive_phase_key(key, side1, phase1)
        self.assertEqual(len(k1), 32)
        self.assertEqual(k1, derive_phase_key(key, side1, phase1))
        if (side1, phase1) != (side2, phase2):
            self.assertNotEqual(k1, derive_phase_key(key, side2, phase2))

    def test_no_concatenation_ambiguity(self):
        """("ab", "c") and ("a", "bc") get different keys: each part is hashed."""
        k = b"\x03" * 32
        self.assertNotEqual(derive_phase_key(k, "ab", "c"), derive_phase_key(k, "a", "bc"))

    def test_differ_by_key(self):
        """The same side and phase under two shared keys give different keys."""
        self.assertNotEqual(
            derive_phase_key(b"\x00" * 32, "side", "version"),
            derive_phase_key(b"\x01" * 32, "side", "version"),
        )


class SecretBoxes(unittest.TestCase):
    @SETTINGS
    @given(keys, st.binary(max_size=2000))
    def test_round_trip(self, key, plaintext):
        """decrypt_data(encrypt_data(p)) == p; output is nonce(24) + MAC(16) + len(p)."""
        encrypted = encrypt_data(key, plaintext)
        self.assertEqual(len(encrypted), 24 + 16 + len(plaintext))
        self.assertEqual(decrypt_data(key, encrypted), plaintext)

    @SETTINGS
    @given(keys, st.binary(max_size=200), st.data())
    def test_tampering_fails(self, key, plaintext, data):
        """Flipping any bit of nonce, MAC or ciphertext raises DecryptError."""
        encrypted = bytearray(encrypt_data(key, plaintext))
        index = data.draw(st.integers(0, len(encrypted) - 1))
        bit = data.draw(st.integers(0, 7))
        encrypted[index] ^= 1 << bit
        with self.assertRaises(DecryptError):
            decrypt_data(key, bytes(encrypted))

    @SETTINGS
    @given(keys, keys, st.binary(max_size=200))
    def test_wrong_key_fails(self, key, other, plaintext):
        """A different key (a wrong code) raises DecryptError."""
        assume(key != other)
        with self.assertRaises(DecryptError):
            decrypt_data(other, encrypt_data(key, plaintext))

    @SETTINGS
    @given(keys, st.binary(max_size=60))
    def test_garbage_fails_cleanly(self, key, garbage):
        """Any short or random input raises DecryptError, never another error."""
        with self.assertRaises(DecryptError):
            decrypt_data(key, garbage)

    def test_nonce_is_random(self):
        """Two encryptions of the same plaintext use different nonces."""
        k = b"\x04" * 32
        a, b = encrypt_data(k, b"same"), encrypt_data(k, b"same")
        self.assertNotEqual(a[:24], b[:24])

    def test_fixed_nonce(self):
        """A given nonce is used as is and prefixed to the ciphertext."""
        k = b"\x05" * 32
        nonce = bytes(range(24))
        encrypted = encrypt_data(k, b"x", nonce=nonce)
        self.assertEqual(encrypted[:24], nonce)
        self.assertEqual(encrypted, encrypt_data(k, b"x", nonce=nonce))

    def test_plaintext_must_be_bytes(self):
        """Text plaintext is a TypeError (the caller must choose an encoding)."""
        self.assertRaises(TypeError, encrypt_data, b"\x06" * 32, "text")

    def test_decrypt_error_is_not_value_error(self):
        """DecryptError is its own class: the Boss maps it to WrongPasswordError."""
        self.assertFalse(issubclass(DecryptError, ValueError))


class PakeBodies(unittest.TestCase):
    @SETTINGS
    @given(st.binary(max_size=100))
    def test_codec_round_trip(self, msg):
        """decode_pake_body(encode_pake_body(m)) == m; the body is {"pake_v1": hex}."""
        body = encode_pake_body(msg)
        self.assertEqual(body, dict_to_bytes({"pake_v1": msg.hex()}))
        self.assertEqual(decode_pake_body(body), msg)

    def test_malformed_bodies(self):
        """Not JSON, not an object, no pake_v1, non-string or non-hex value: MalformedPakeError."""
        for bad in [
            b"",
            b"\xff\xfe",
            b"not json",
            b"[1, 2]",
            b'"pake_v1"',
            b"{}",
            b'{"pake_v2": "00"}',
            b'{"pake_v1": 5}',
            b'{"pake_v1": null}',
            b'{"pake_v1": ["00"]}',
            b'{"pake_v1": "xyz"}',
            b'{"pake_v1": "abc"}',
        ]:
            with self.assertRaises(MalformedPakeError, msg=repr(bad)) as cm:
                decode_pake_body(bad)
            self.assertIsInstance(cm.exception, ValueError)
            self.assertIsInstance(cm.exception, PakeError)
            self.assertRaises(MalformedPakeError, finish_pake, make_pake("1-a", "app")[0], bad)

    @SETTINGS
    @given(st.binary(max_size=200))
    def test_arbitrary_bodies(self, body):
        """Arbitrary bytes as a pake body give a key or a PakeError, nothing else."""
        sp, _ = make_pake("1-a-b", "appid")
        try:
            key = finish_pake(sp, body)
        except PakeError:
            return
        self.assertEqual(len(key), 32)

    @SETTINGS
    @given(st.binary(min_size=32, max_size=32))
    def test_arbitrary_elements(self, element):
        """A well-formed body whose element is random bytes: a key or a PakeError."""
        sp, _ = make_pake("1-a-b", "appid")
        try:
            key = finish_pake(sp, encode_pake_body(b"S" + element))
        except PakeError:
            return
        self.assertEqual(len(key), 32)

    def test_wrong_length_and_side(self):
        """A message of the wrong length or from a non-symmetric side is a PakeError."""
        _, good = make_pake("1-a-b", "appid")
        msg = decode_pake_body(good)
        for bad in [msg[:-1], msg + b"\x00", b"A" + msg[1:], b"B" + msg[1:], b""]:
            sp, _ = make_pake("1-a-b", "appid")
            self.assertRaises(PakeError, finish_pake, sp, encode_pake_body(bad))

    def test_reflection(self):
        """Our own message reflected back is refused (spake2 ReflectionThwarted)."""
        sp, body = make_pake("1-a-b", "appid")
        self.assertRaises(PakeError, finish_pake, sp, body)


class Pake(unittest.TestCase):
    def test_same_code_same_key(self):
        """Two sides with the same code and appid agree on a 32-byte key."""
        a, body_a = make_pake("7-guitarist-revenge", "appid")
        b, body_b = make_pake("7-guitarist-revenge", "appid")
        key_a = finish_pake(a, body_b)
        self.assertEqual(key_a, finish_pake(b, body_a))
        self.assertEqual(len(key_a), 32)

    def test_different_code(self):
        """Different codes give different keys (a wrong code is detected later)."""
        a, body_a = make_pake("7-guitarist-revenge", "appid")
        b, body_b = make_pake("7-guitarist-revengf", "appid")
        self.assertNotEqual(finish_pake(a, body_b), finish_pake(b, body_a))

    def test_different_appid(self):
        """The appid is the SPAKE2 identity: two apps never share a key."""
        a, body_a = make_pake("7-x", "app1")
        b, body_b = make_pake("7-x", "app2")
        self.assertNotEqual(finish_pake(a, body_b), finish_pake(b, body_a))

    def test_entropy_injected(self):
        """make_pake uses the given entropy: the same entropy, the same body."""
        _, body1 = make_pake("7-x", "app", entropy_f=fixed_entropy(1))
        _, body2 = make_pake("7-x", "app", entropy_f=fixed_entropy(1))
        _, body3 = make_pake("7-x", "app", entropy_f=fixed_entropy(2))
        self.assertEqual(body1, body2)
        self.assertNotEqual(body1, body3)

    def test_body_shape(self):
        """The outbound body is {"pake_v1": hex} of a 33-byte message starting with b"S"."""
        _, body = make_pake("7-x", "app")
        msg = decode_pake_body(body)
        self.assertEqual(len(msg), _crypto.PAKE_MSG_LENGTH)
        self.assertEqual(msg[:1], b"S")


class Versions(unittest.TestCase):
    def test_plain(self):
        """Without extra keys the plaintext is {"app_versions": ...}."""
        self.assertEqual(encode_version({"a": 1}, {}), b'{"app_versions": {"a": 1}}')

    def test_extra_first(self):
        """Library keys come before app_versions, as the reference orders them."""
        b = encode_version({}, {"can-dilate": ["ged"]})
        self.assertEqual(b, b'{"can-dilate": ["ged"], "app_versions": {}}')

    @SETTINGS
    @given(
        st.dictionaries(st.text(), st.integers() | st.text(), max_size=4),
        st.dictionaries(st.text().filter(lambda k: k != "app_versions"), st.text(), max_size=3),
    )
    def test_round_trip(self, app_versions, extra):
        """decode_version(encode_version(a, e)) holds e's keys and app_versions == a."""
        d = decode_version(encode_version(app_versions, extra))
        self.assertEqual(d["app_versions"], app_versions)
        for k, v in extra.items():
            self.assertEqual(d[k], v)

    def test_extra_may_not_shadow(self):
        """extra cannot carry app_versions (it would silently replace the app's)."""
        self.assertRaises(ValueError, encode_version, {}, {"app_versions": {}})

    def test_decode_rejects(self):
        """A non-object plaintext, or a non-object app_versions, is a ValueError."""
        for bad in [b"[]", b"nope", b'{"app_versions": []}', b'{"app_versions": "x"}']:
            self.assertRaises(ValueError, decode_version, bad)

    def test_decode_missing_app_versions(self):
        """A peer that sends no app_versions is read as sending {}."""
        self.assertEqual(decode_version(b'{"x": 1}'), {"x": 1, "app_versions": {}})
