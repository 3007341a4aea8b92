"""The key wormhole-william derives when its SPAKE2 (the Go gospake2)
disagrees with SPAKE2, so that we can still talk to it (docs/interop.md
"wormhole-william 1.0.6").

gospake2 encodes a group element from a big integer's minimal bytes: an
element whose 32-byte little-endian encoding ends in a zero byte (one in
256) comes out shorter, and its symmetric transcript gives each of the
two messages and the shared element K a slot of K's length. So when K
ends in a zero byte, it hashes the first 31 bytes of each message and
K's 31, where SPAKE2 (python-spake2, the reference, ours) hashes all 32:
the two sides hold different keys, and each says that the other's first
message does not decrypt (the reference 0.24 against wormhole-william:
about one exchange in 350).

``gospake2_key`` gives the key wormhole-william holds then, from our side
of the same exchange; the Key and Receive machines try it on the peer's
first message when the peer is not a Python implementation
(``_key.Key``). Nothing of the exchange changes: the same SPAKE2
secret, one password guess per exchange, a key the peer derived from it.
"""

from hashlib import sha256

from spake2 import SPAKE2_Symmetric


class SPAKE2(SPAKE2_Symmetric):
    """SPAKE2_Symmetric (spake2 0.9) that keeps what its transcript hashed:
    ``transcript_parts`` = (our message, the peer's message, K), each as
    its 32-byte encoding, once ``finish()`` ran."""

    transcript_parts = None

    def _finalize(self, K_bytes):
        self.transcript_parts = (self.outbound_message, self.inbound_message, K_bytes)
        return super()._finalize(K_bytes)


def _minimal(encoding):
    # a little-endian integer's bytes without its high zero bytes: what
    # gospake2's element encoding gives
    return encoding.rstrip(b"\0")


def _slot(piece, size):
    # gospake2 copies each piece into a slot of K's length: cut, or padded
    # with the zero bytes the slot was made of
    return (piece + bytes(size))[:size]


def gospake2_key(sp):
    """wormhole-william's key for the exchange ``sp`` (a finished SPAKE2),
    or None when it is SPAKE2's own (K does not end in a zero byte)."""
    if sp.transcript_parts is None:
        return None
    ours, theirs, k = sp.transcript_parts
    k_held = _minimal(k)
    if len(k_held) == len(k):
        return None
    # its own message as it holds it, ours as it received it, in its order
    first, second = sorted([_minimal(theirs), ours])
    size = len(k_held)
    transcript = b"".join([sha256(sp.pw).digest(), sha256(sp.idSymmetric).digest(),
                           _slot(first, size), _slot(second, size), k_held])
    return sha256(transcript).digest()
