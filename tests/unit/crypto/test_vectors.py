"""Known answers recorded from the reference implementation.

tests/data/reference_vectors.json is written by
misc/record-reference-vectors.py (run with the reference venv; not in CI).
These tests pin that our sans-I/O code produces the same bytes.
"""

import json
import os

from twisted.trial import unittest

from wormhole._crypto import (
    MAC_LENGTH,
    NONCE_LENGTH,
    DecryptError,
    decode_pake_body,
    decode_version,
    decrypt_data,
    derive_key,
    derive_phase_key,
    derive_verifier,
    encode_version,
    encrypt_data,
    finish_pake,
    make_pake,
)
from wormhole.util import bytes_to_dict, dict_to_bytes

from ..._paths import REPO_ROOT

VECTORS_PATH = os.path.join(REPO_ROOT, "tests", "data", "reference_vectors.json")

with open(VECTORS_PATH, encoding="ascii") as f:
    VECTORS = json.load(f)


def unhex(s):
    return bytes.fromhex(s)


def replay(chunks):
    """An entropy_f that hands out the recorded entropy, in order."""
    queue = [unhex(c) for c in chunks]

    def entropy_f(n):
        chunk = queue.pop(0)
        assert len(chunk) == n, (len(chunk), n)
        return chunk

    return entropy_f


class Functions(unittest.TestCase):
    def test_has_vectors(self):
        """The file holds vectors of every kind (a truncated file would pass vacuously)."""
        for kind in ["derive_key", "derive_phase_key", "encrypt_data", "dict_to_bytes"]:
            self.assertGreaterEqual(len(VECTORS[kind]), 3, kind)
        self.assertEqual(len(VECTORS["sessions"]), 2)

    def test_derive_key(self):
        """derive_key (HKDF-SHA256, no salt) matches the reference for every purpose and length."""
        for v in VECTORS["derive_key"]:
            self.assertEqual(derive_key(unhex(v["key"]), unhex(v["purpose"]), v["length"]).hex(),
                             v["out"], v)

    def test_derive_phase_key(self):
        """derive_phase_key matches the reference for every side and phase."""
        for v in VECTORS["derive_phase_key"]:
            self.assertEqual(derive_phase_key(unhex(v["key"]), v["side"], v["phase"]).hex(),
                             v["out"], v)

    def test_encrypt_data(self):
        """We decrypt the reference's SecretBoxes, and re-encrypting with its nonce gives its
        bytes."""
        for v in VECTORS["encrypt_data"]:
            key, plaintext = unhex(v["key"]), unhex(v["plaintext"])
            encrypted = unhex(v["encrypted"])
            self.assertEqual(decrypt_data(key, encrypted), plaintext)
            self.assertEqual(encrypt_data(key, plaintext, nonce=encrypted[:NONCE_LENGTH]),
                             encrypted)

    def test_dict_to_bytes(self):
        """dict_to_bytes gives the reference's exact JSON bytes (separators, escaping)."""
        for v in VECTORS["dict_to_bytes"]:
            self.assertEqual(dict_to_bytes(v["dict"]).hex(), v["bytes"])
            self.assertEqual(bytes_to_dict(unhex(v["bytes"])), v["dict"])


class Sessions(unittest.TestCase):
    """Two reference wormholes, SPAKE2 entropy pinned, through a reference server."""

    def _session(self, name):
        return next(s for s in VECTORS["sessions"] if s["name"] == name)

    def check_pake(self, session):
        a, b = session["sides"]
        sp_a, body_a = make_pake(session["code"], session["appid"], entropy_f=replay(a["entropy"]))
        sp_b, body_b = make_pake(session["code"], session["appid"], entropy_f=replay(b["entropy"]))
        # the bodies we would send are byte for byte the reference's
        self.assertEqual(body_a.hex(), a["pake_body"])
        self.assertEqual(body_b.hex(), b["pake_body"])
        key = unhex(session["key"])
        self.assertEqual(finish_pake(sp_a, unhex(b["pake_body"])), key)
        self.assertEqual(finish_pake(sp_b, unhex(a["pake_body"])), key)
        self.assertEqual(derive_verifier(key).hex(), session["verifier"])
        return key

    def check_messages(self, session, key):
        phases = []
        for m in session["messages"]:
            body = unhex(m["body"])
            phases.append(m["phase"])
            if m["phase"] == "pake":
                self.assertEqual(len(decode_pake_body(body)), 33)
                continue
            phase_key = derive_phase_key(key, m["side"], m["phase"])
            plaintext = decrypt_data(phase_key, body)
            self.assertEqual(plaintext.hex(), m["plaintext"])
            self.assertEqual(encrypt_data(phase_key, plaintext, nonce=body[:NONCE_LENGTH]), body)
            # the other side's key must not open it
            other = next(s["side"] for s in session["sides"] if s["side"] != m["side"])
            self.assertRaises(DecryptError, decrypt_data,
                              derive_phase_key(key, other, m["phase"]), body)
        self.assertEqual(sorted(phases), ["0", "0", "pake", "pake", "version", "version"])

    def version_plaintexts(self, session):
        return [unhex(m["plaintext"]) for m in session["messages"] if m["phase"] == "version"]

    def test_plain_session(self):
        """PAKE bodies, key, verifier and every phase's SecretBox match the reference."""
        session = self._session("plain")
        self.check_messages(session, self.check_pake(session))

    def test_plain_version(self):
        """Our version plaintext for app_versions alone equals the reference's."""
        session = self._session("plain")
        for plaintext in self.version_plaintexts(session):
            self.assertEqual(encode_version(session["versions"], {}), plaintext)
            self.assertEqual(decode_version(plaintext)["app_versions"], session["versions"])

    def test_dilation_session(self):
        """The same with a non-ASCII code and dilation=True."""
        session = self._session("dilation")
        self.assertFalse(session["code"].isascii())
        self.check_messages(session, self.check_pake(session))

    def test_dilation_version(self):
        """With Dilation the version plaintext carries can-dilate and dilation-abilities
        before app_versions, byte for byte as the reference writes it."""
        session = self._session("dilation")
        extra = {
            "can-dilate": ["ged"],
            "dilation-abilities": [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}],
        }
        for plaintext in self.version_plaintexts(session):
            self.assertEqual(encode_version({}, extra), plaintext)


class CLITranscript(unittest.TestCase):
    """`wormhole send --text` to `wormhole receive` between two reference CLIs.

    No secret is known here (the SPAKE2 entropy was random), so this pins
    the shape: each side's pake body and the encrypted bodies' sizes.
    """

    def setUp(self):
        self.t = VECTORS["cli_transcript"]
        self.by_phase = {}
        for m in self.t["messages"]:
            self.by_phase.setdefault(m["phase"], []).append(m)

    def test_phases(self):
        """Each of the two sides sends one pake, one version and one phase-0 message."""
        sides = {m["side"] for m in self.t["messages"]}
        self.assertEqual(len(sides), 2)
        for phase in ["pake", "version", "0"]:
            self.assertEqual({m["side"] for m in self.by_phase[phase]}, sides, phase)
        self.assertEqual(len(self.t["messages"]), 6)

    def test_pake_bodies(self):
        """The pake bodies are {"pake_v1": hex} of 33-byte symmetric SPAKE2 messages."""
        for m in self.by_phase["pake"]:
            body = unhex(m["body"])
            self.assertEqual(list(bytes_to_dict(body)), ["pake_v1"])
            msg = decode_pake_body(body)
            self.assertEqual(len(msg), 33)
            self.assertEqual(msg[0], 0x53)

    def test_encrypted_sizes(self):
        """Encrypted bodies are nonce(24) + MAC(16) + the JSON plaintext we would send:
        version {"app_versions": {}}, the offer, and the message_ack (File-transfer protocol)."""
        overhead = NONCE_LENGTH + MAC_LENGTH
        for m in self.by_phase["version"]:
            self.assertEqual(len(unhex(m["body"])), overhead + len(encode_version({}, {})))
        offer = dict_to_bytes({"offer": {"message": self.t["text"]}})
        answer = dict_to_bytes({"answer": {"message_ack": "ok"}})
        sizes = sorted(len(unhex(m["body"])) for m in self.by_phase["0"])
        self.assertEqual(sizes, sorted([overhead + len(offer), overhead + len(answer)]))

    def test_random_key_fails(self):
        """Without the key the bodies do not open (they are really encrypted)."""
        for m in self.by_phase["version"]:
            self.assertRaises(
                DecryptError, decrypt_data, derive_phase_key(b"\x00" * 32, m["side"], "version"),
                unhex(m["body"]),
            )
