"""The signed message (P2P-D2): signature ‖ L ‖ opcode/flags ‖ From ‖ To ‖
payload. Sans-I/O: encode with a private key, split and verify bytes."""

import struct

import attrs

from . import _keys
from ._framing import FramingError

_LENGTH_OP_FLAGS = struct.Struct("!LBB")


def header_length(beta):
    """H = S + 6 + 2D = 3β/8 + 82 (P2P-D2)."""
    return beta // 8 + 6 + 2 * _keys.der_length(beta)


@attrs.frozen
class Message:
    """One message as received: `raw` is relayed byte for byte (P2P-D2.6)."""
    signature: bytes
    opcode: int
    reserved: int       # the 11 reserved bits, must be 0 (P2P-D2.5)
    encrypted: bool
    sender: bytes       # From DER
    recipient: bytes    # To DER
    payload: bytes      # as sent: msgpack or the §4 ciphertext
    raw: bytes = attrs.field(repr=False)

    @property
    def signed_part(self):
        """Bytes [S, H + L): what the signature covers (P2P-D2.3); a view,
        not a copy of a payload of up to 16 MiB."""
        return memoryview(self.raw)[len(self.signature):]

    @property
    def associated_data(self):
        """Header bytes [S+4, H): opcode/flags, From, To (P2P-D4.2)."""
        s = len(self.signature)
        return self.raw[s + 4:s + 6 + 2 * len(self.sender)]


def associated_data(opcode, encrypted, sender, recipient):
    """P2P-D4.2, built before the message exists (for encryption)."""
    return bytes([(opcode & 15) << 4, 1 if encrypted else 0]) + sender + recipient


def encode_message(private_key, sender, recipient, opcode, payload,
                   encrypted=False):
    """Sign and serialize (P2P-D2.2 From before To; P2P-D2.3 signature
    over everything after it, payload included)."""
    unsigned = (_LENGTH_OP_FLAGS.pack(len(payload), (opcode & 15) << 4,
                                      1 if encrypted else 0)
                + sender + recipient + payload)
    return _keys.sign(private_key, unsigned) + unsigned


def split_messages(body, beta):
    """The messages of one decompressed transmission body; FramingError
    unless it is ≥ 1 whole (header, payload) pair (P2P-D3.1)."""
    s = beta // 8
    d = _keys.der_length(beta)
    h = header_length(beta)
    out = []
    offset = 0
    if not body:
        raise FramingError("empty transmission")
    while offset < len(body):
        if len(body) - offset < h:
            raise FramingError("partial message header")
        length, op, flags = _LENGTH_OP_FLAGS.unpack_from(body, offset + s)
        end = offset + h + length
        if end > len(body):
            raise FramingError("payload runs past the transmission")
        raw = body[offset:end]
        out.append(Message(
            signature=raw[:s], opcode=op >> 4,
            reserved=((op & 15) << 7) | (flags >> 1),
            encrypted=bool(flags & 1),
            sender=raw[s + 6:s + 6 + d], recipient=raw[s + 6 + d:h],
            payload=raw[h:], raw=raw))
        offset = end
    return out


def check_message(message, beta):
    """P2P-D5.3's first refusals after framing: non-canonical key, bad
    signature. Raises NonCanonicalKey or BadSignature (both close)."""
    _keys.check_canonical(message.sender, beta)
    _keys.check_canonical(message.recipient, beta)
    if not _keys.verify(message.sender, message.signature, message.signed_part):
        raise BadSignature("signature does not verify")


class BadSignature(ValueError):
    """P2P-D5.3: close, honest peers verify before relaying."""
