"""RSA keys and addresses (P2P-D1): canonical DER SubjectPublicKeyInfo as
the extended address, SHA-256 of it truncated to τ bits as the Kademlia
address."""

import functools
import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from ._config import KEY_SIZES


class NonCanonicalKey(ValueError):
    """A From/To field that is not the one canonical DER form (P2P-D1.2)."""


# P2P-D1.2: the fixed 33-byte prefix of each β (fixed-width fields)
def _prefix(beta):
    n = beta // 8
    spki_len = n + 34      # bytes after the outer SEQUENCE header
    bits_len = n + 15      # BIT STRING content (unused-bits byte + RSAPublicKey)
    rsapk_len = n + 10     # RSAPublicKey SEQUENCE content
    mod_len = n + 1        # INTEGER: 0x00 then the modulus
    return (b"\x30\x82" + spki_len.to_bytes(2, "big")
            + bytes.fromhex("300d06092a864886f70d0101010500")
            + b"\x03\x82" + bits_len.to_bytes(2, "big") + b"\x00"
            + b"\x30\x82" + rsapk_len.to_bytes(2, "big")
            + b"\x02\x82" + mod_len.to_bytes(2, "big") + b"\x00")


PREFIXES = {beta: _prefix(beta) for beta in KEY_SIZES}
SUFFIX = bytes.fromhex("0203010001")  # INTEGER 65537


def der_length(beta):
    """D = β/8 + 38 (P2P-D1.2)."""
    return beta // 8 + 38


def check_canonical(der, beta):
    """Raise NonCanonicalKey unless `der` is the canonical SPKI of a β-bit
    RSA key with e = 65537 (P2P-D1.2): the parser is then never asked to
    interpret anything but a modulus."""
    n = beta // 8
    prefix = PREFIXES[beta]
    if (len(der) != n + 38 or not der.startswith(prefix)
            or not der.endswith(SUFFIX) or not der[33] & 0x80):
        raise NonCanonicalKey("not a canonical %d-bit RSA key" % beta)


@functools.lru_cache(maxsize=4096)
def load_public(der):
    """The parsed key for a canonical DER (cached by DER, P2P-D1.2)."""
    return serialization.load_der_public_key(der)


def public_der(private_key):
    """The extended address of a private key (P2P-D1.3)."""
    return private_key.public_key().public_bytes(
        serialization.Encoding.DER,
        serialization.PublicFormat.SubjectPublicKeyInfo)


def generate_private_key(beta=2048):
    """A fresh RSA key, e = 65537 (P2P-D1.1)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=beta)


def truncated_address(der, tau):
    """int(SHA-256(DER), big-endian) mod 2^τ (P2P-D1.3)."""
    return int.from_bytes(hashlib.sha256(der).digest(), "big") % (1 << tau)


def value_address(key, tau):
    """SHA-256(key bytes) mod 2^τ (P2P-D1.4)."""
    return int.from_bytes(hashlib.sha256(key).digest(), "big") % (1 << tau)


def address_bytes(address, tau):
    """The wire form of a truncated address: bin(τ/8) (P2P-D1.4)."""
    return address.to_bytes(tau // 8, "big")


def bucket_index(a, b):
    """bit_length(a XOR b) − 1; −1 for a node's own address (P2P-D1.4)."""
    return (a ^ b).bit_length() - 1


# P2P-D2.4: PSS with SHA-256, MGF1-SHA-256 and exactly 32 bytes of salt
PSS = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
OAEP = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()),
                    algorithm=hashes.SHA256(), label=None)
SHA256 = hashes.SHA256()


def sign(private_key, data):
    return private_key.sign(data, PSS, SHA256)


def verify(der, signature, data):
    """True when `signature` is a valid PSS signature (P2P-D2.4)."""
    try:
        load_public(der).verify(signature, data, PSS, SHA256)
    except InvalidSignature:
        return False
    return True


CHANGE_KEY_CONTEXT = b"p2p-change-key\0"


def change_key_proof(new_private, current_der, new_der):
    """P2P-D5.5: the new key signs b"p2p-change-key\\0" ‖ current ‖ new."""
    return sign(new_private, CHANGE_KEY_CONTEXT + current_der + new_der)


def check_change_key_proof(current_der, new_der, proof):
    return verify(new_der, proof, CHANGE_KEY_CONTEXT + current_der + new_der)
