"""Encryption "using the To public key" (P2P-D4): RSA-OAEP wraps a fresh
ChaCha20-Poly1305 key; payload = W ‖ N ‖ C, header bytes as AD."""

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from . import _keys


class Undecryptable(ValueError):
    """NACK "undecryptable" (P2P-D5.3)."""


def encrypt(recipient_der, plaintext, ad, random_bytes):
    """W ‖ N ‖ C; `random_bytes(n)` is the injected RNG (P2P-D4.1)."""
    key = random_bytes(32)
    nonce = random_bytes(12)
    wrapped = _keys.load_public(recipient_der).encrypt(key, _keys.OAEP)
    return wrapped + nonce + ChaCha20Poly1305(key).encrypt(nonce, plaintext, ad)


def decrypt(private_key, payload, ad):
    s = private_key.key_size // 8
    if len(payload) < s + 12 + 16:
        raise Undecryptable("ciphertext too short")
    wrapped, nonce, sealed = payload[:s], payload[s:s + 12], payload[s + 12:]
    try:
        key = private_key.decrypt(wrapped, _keys.OAEP)
        return ChaCha20Poly1305(key).decrypt(nonce, sealed, ad)
    except (ValueError, InvalidTag):
        raise Undecryptable("cannot decrypt") from None
