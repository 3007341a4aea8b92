"""Key agreement, key derivation and message encryption (sans-I/O).

Everything here follows the Client-to-client protocol:

- the ``pake`` phase carries the SPAKE2 message; both sides run the
  symmetric variant, the password is the whole code and the identity is the
  AppID, so two applications never agree on a key by accident;
- every other phase is a NaCl ``SecretBox`` (random 24-byte nonce prepended)
  under a key derived with HKDF-SHA256 from the shared key, with CTXinfo
  ``wormhole:phase:`` + SHA256(side) + SHA256(phase);
- the verifier is a derivation of the shared key that humans may compare.

Primitives come from ``cryptography`` (HKDF), ``pynacl`` (SecretBox) and
``spake2`` (SPAKE2_Symmetric, kept in ``_gospake2.SPAKE2`` so that the
key wormhole-william derives can be tried too); nothing here is
hand-rolled.
"""

import os
from hashlib import sha256

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.exceptions import CryptoError
from nacl.secret import SecretBox
from nacl.utils import random as nacl_random
from spake2 import SPAKEError
from spake2.ed25519_basic import NotOnCurve
from spake2.spake2 import OnlyCallFinishOnce

from ._gospake2 import SPAKE2
from .util import (
    bytes_to_dict,
    bytes_to_hexstr,
    dict_to_bytes,
    hexstr_to_bytes,
    to_bytes,
)

__all__ = [
    "DecryptError",
    "MalformedPakeError",
    "PakeError",
    "decode_pake_body",
    "decode_version",
    "decrypt_data",
    "derive_key",
    "derive_phase_key",
    "derive_verifier",
    "encode_pake_body",
    "encode_version",
    "encrypt_data",
    "finish_pake",
    "make_pake",
]

NONCE_LENGTH = SecretBox.NONCE_SIZE  # 24
MAC_LENGTH = SecretBox.MACBYTES  # 16
KEY_LENGTH = SecretBox.KEY_SIZE  # 32
# A SPAKE2_Symmetric message is one side byte (b"S") and a 32-byte
# Ed25519 group element. Checked here because spake2 only asserts it, and
# asserts vanish under ``python -O``.
PAKE_MSG_LENGTH = 33
PAKE_SYMMETRIC_SIDE = 0x53


class DecryptError(Exception):
    """A message did not decrypt: wrong key (wrong code), or tampered.

    Client-to-client protocol: any undecryptable message makes the mood "scary"
    and closes the wormhole (the Boss turns this into WrongPasswordError).
    """


class PakeError(ValueError):
    """The peer's PAKE message could not be used to finish the exchange."""


class MalformedPakeError(PakeError):
    """The ``pake`` phase body is not ``{"pake_v1": "<hex>"}`` JSON."""


def derive_key(key: bytes, purpose: bytes, length: int = 32) -> bytes:
    """HKDF-SHA256 of ``key`` with no salt and ``purpose`` as CTXinfo."""
    if not isinstance(key, bytes):
        raise TypeError(f"key must be bytes, not {type(key).__name__}")
    if not isinstance(purpose, bytes):
        raise TypeError(f"purpose must be bytes, not {type(purpose).__name__}")
    if not isinstance(length, int) or isinstance(length, bool):
        raise TypeError(f"length must be int, not {type(length).__name__}")
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose).derive(key)


def derive_phase_key(key: bytes, side: str, phase: str) -> bytes:
    """The per-(side, phase) SecretBox key of the Client-to-client protocol.

    Hashing side and phase gives fixed-length pieces, so no two (side,
    phase) pairs can produce the same CTXinfo by concatenation. Sides and
    phases on the wire are ASCII; we encode them as UTF-8, which is the
    same there (the reference refuses non-ASCII outright).
    """
    side_hash = sha256(to_bytes(side)).digest()
    phase_hash = sha256(to_bytes(phase)).digest()
    return derive_key(key, b"wormhole:phase:" + side_hash + phase_hash)


def derive_verifier(key: bytes) -> bytes:
    """The value both humans may compare (Client API, "Verifier")."""
    return derive_key(key, b"wormhole:verifier")


def encrypt_data(key: bytes, plaintext: bytes, nonce: bytes | None = None) -> bytes:
    """SecretBox-encrypt; returns nonce (24) || ciphertext+MAC (len+16).

    ``nonce`` is only for known-answer tests; real callers let it be random.
    """
    if not isinstance(plaintext, bytes):
        raise TypeError(f"plaintext must be bytes, not {type(plaintext).__name__}")
    if nonce is None:
        nonce = nacl_random(NONCE_LENGTH)
    box = SecretBox(key)
    return bytes(box.encrypt(plaintext, nonce))


def decrypt_data(key: bytes, encrypted: bytes) -> bytes:
    """Reverse of encrypt_data; raises DecryptError on any failure."""
    if not isinstance(encrypted, bytes):
        raise TypeError(f"encrypted must be bytes, not {type(encrypted).__name__}")
    if len(encrypted) < NONCE_LENGTH + MAC_LENGTH:
        raise DecryptError(
            f"message too short to decrypt ({len(encrypted)} bytes, "
            f"need at least {NONCE_LENGTH + MAC_LENGTH})"
        )
    box = SecretBox(key)
    try:
        return box.decrypt(encrypted)
    except CryptoError as e:
        raise DecryptError("message did not decrypt (wrong code, or tampered)") from e


def encode_pake_body(msg: bytes) -> bytes:
    """The ``pake`` phase body: ``{"pake_v1": hex(spake2 message)}``."""
    return dict_to_bytes({"pake_v1": bytes_to_hexstr(msg)})


def decode_pake_body(body: bytes) -> bytes:
    """Return the SPAKE2 message inside a ``pake`` body.

    Raises MalformedPakeError naming what is wrong.
    """
    try:
        d = bytes_to_dict(body)
    except (TypeError, ValueError) as e:
        raise MalformedPakeError(f"pake body is not a JSON object: {e}") from e
    if "pake_v1" not in d:
        raise MalformedPakeError(f"pake body has no 'pake_v1' key (keys: {sorted(d)})")
    value = d["pake_v1"]
    if not isinstance(value, str):
        raise MalformedPakeError(f"pake_v1 must be a hex string, not {type(value).__name__}")
    try:
        return hexstr_to_bytes(value)
    except ValueError as e:
        raise MalformedPakeError(f"pake_v1 is not hex: {e}") from e


def make_pake(code: str, appid: str, entropy_f=None):
    """Start SPAKE2_Symmetric for ``code``; return (spake2 object, body).

    ``entropy_f(n) -> bytes`` defaults to os.urandom; tests inject a fixed
    source to get known answers.
    """
    sp = SPAKE2(
        to_bytes(code),
        idSymmetric=to_bytes(appid),
        entropy_f=entropy_f if entropy_f is not None else os.urandom,
    )
    return sp, encode_pake_body(sp.start())


def finish_pake(sp, inbound_body: bytes) -> bytes:
    """Finish the exchange with the peer's ``pake`` body; return the key.

    Raises MalformedPakeError for a body that does not parse, PakeError
    when spake2 refuses the message (wrong length, not a group element,
    or our own message reflected back).
    """
    msg = decode_pake_body(inbound_body)
    if len(msg) != PAKE_MSG_LENGTH:
        raise PakeError(f"peer's PAKE message is {len(msg)} bytes, expected {PAKE_MSG_LENGTH}")
    if msg[0] != PAKE_SYMMETRIC_SIDE:
        raise PakeError(
            f"peer's PAKE message is not from a symmetric side (side byte {msg[0]:#04x})")
    try:
        return sp.finish(msg)
    except OnlyCallFinishOnce:
        raise  # our own misuse, not the peer's fault
    except (SPAKEError, NotOnCurve, ValueError, AssertionError) as e:
        raise PakeError(f"peer's PAKE message was refused: {type(e).__name__}: {e}") from e


def encode_version(app_versions: dict, extra: dict) -> bytes:
    """Plaintext of the ``version`` phase (Client-to-client protocol).

    ``app_versions`` is the application's dict (``create(versions=)``);
    ``extra`` holds the library's own keys (e.g. Dilation's ``can-dilate``
    and ``dilation-abilities``). The reference puts ``extra`` first and
    ``app_versions`` last; we do the same so the bytes match its
    (tests/data/reference_vectors.json, session "dilation").
    """
    if not isinstance(app_versions, dict):
        raise TypeError(f"app_versions must be a dict, not {type(app_versions).__name__}")
    if not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict, not {type(extra).__name__}")
    if "app_versions" in extra:
        raise ValueError("extra must not contain 'app_versions'")
    d = dict(extra)
    d["app_versions"] = app_versions
    return dict_to_bytes(d)


def decode_version(b: bytes) -> dict:
    """Parse a decrypted ``version`` plaintext; raises ValueError.

    A missing ``app_versions`` is read as ``{}`` (a peer that sends none),
    but one that is present must be an object.
    """
    d = bytes_to_dict(b)
    app_versions = d.setdefault("app_versions", {})
    if not isinstance(app_versions, dict):
        kind = type(app_versions).__name__
        raise ValueError(f"app_versions must be an object, not {kind}")  # noqa: TRY004
    return d
