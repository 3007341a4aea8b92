"""Shared test material: the committed TEST-ONLY keys (P2P-D8.1) and a
per-process pool of fresh RSA keys for network tests (P2P-D8.3)."""

import functools
import json
import os

from cryptography.hazmat.primitives import serialization

from p2pmesh import _keys

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")


def load_vectors(name):
    with open(os.path.join(VECTORS, name)) as f:
        return json.load(f)


@functools.cache
def test_keys():
    """{"A": (private key, DER), "B": ..., "C": ...} — TEST-ONLY keys."""
    out = {}
    for name, entry in load_vectors("keys.json")["keys"].items():
        private = serialization.load_pem_private_key(
            entry["private_pem"].encode(), None)
        out[name] = (private, bytes.fromhex(entry["public_der"]))
    return out


_POOL = []


def pooled_keys(count):
    """`count` distinct RSA-2048 keys, generated once per process."""
    while len(_POOL) < count:
        _POOL.append(_keys.generate_private_key(2048))
    return _POOL[:count]
