"""L3 records: the tagged plaintexts inside one L2 frame (Dilation protocol,
"L2 Message Payload Encoding"), sans-I/O.

The Dilation protocol lists the tags twice (with KCM in
"L2 Message Payload Encoding", without it in "L3 protocol"); the list *with*
KCM (0x00..0x06) is the one the reference 0.24 speaks (docs/dilation.md,
"Wire facts settled by interop with the reference 0.24"), so it is the one
used here. Subchannel ids and sequence numbers are 4-byte big-endian.

OPEN carries the subprotocol name after the seqnum, UTF-8, to the end of the
record: there is no control channel any more and listener_for(name) decides
who accepts a subchannel (Dilation protocol, "L5 subchannels";
docs/dilation.md, "Wire facts settled by interop with the reference 0.24").
"""

import struct

import attr

T_KCM = 0x00
T_PING = 0x01
T_PONG = 0x02
T_OPEN = 0x03
T_DATA = 0x04
T_CLOSE = 0x05
T_ACK = 0x06

_U32 = struct.Struct(">L")
_TWO_U32 = struct.Struct(">LL")
_TAG_TWO_U32 = struct.Struct(">BLL")
MAX_U32 = 2 ** 32 - 1
# the bytes of a DATA (and OPEN, CLOSE) record before its payload: tag,
# subchannel id, seqnum
DATA_HEADER = _TAG_TWO_U32.size


class RecordError(ValueError):
    """A plaintext that is no record of the Dilation protocol
    ("L2 Message Payload Encoding"): the connection that sent it is broken
    (or hostile) and must be dropped."""


def _u32(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_U32:
        raise ValueError(f"{name} must be an int in 0..2**32-1, not {value!r}")


def _ping_id(instance, attribute, value):
    if not isinstance(value, bytes) or len(value) != 4:
        raise ValueError(f"{attribute.name} must be 4 bytes, not {value!r}")


def _int_field(instance, attribute, value):
    _u32(attribute.name, value)


@attr.s(frozen=True, slots=True)
class KCM:
    """Key-confirmation message: tag only."""


@attr.s(frozen=True, slots=True)
class Ping:
    ping_id = attr.ib(validator=_ping_id)


@attr.s(frozen=True, slots=True)
class Pong:
    ping_id = attr.ib(validator=_ping_id)


@attr.s(frozen=True, slots=True)
class Open:
    scid = attr.ib(validator=_int_field)
    seqnum = attr.ib(validator=_int_field)
    subprotocol = attr.ib(validator=attr.validators.instance_of(str))


@attr.s(frozen=True, slots=True)
class Data:
    scid = attr.ib(validator=_int_field)
    seqnum = attr.ib(validator=_int_field)
    data = attr.ib(validator=attr.validators.instance_of(bytes))


@attr.s(frozen=True, slots=True)
class Close:
    scid = attr.ib(validator=_int_field)
    seqnum = attr.ib(validator=_int_field)


@attr.s(frozen=True, slots=True)
class Ack:
    resp_seqnum = attr.ib(validator=_int_field)


_KCM_BYTES = bytes([T_KCM])
_new = object.__new__
_set = object.__setattr__


def data_unchecked(scid, seqnum, data):
    """A Data record without the validators, for the per-record paths whose
    values are valid by construction (unpacked from 4 bytes, or our own
    counters): attrs validation costs more than the rest of the parse."""
    r = _new(Data)
    _set(r, "scid", scid)
    _set(r, "seqnum", seqnum)
    _set(r, "data", data)
    return r


def encode_record(r) -> bytes:
    """One record as the plaintext of one L2 frame."""
    # DATA first: it is nearly every record of a bulk transfer
    if isinstance(r, Data):
        return _TAG_TWO_U32.pack(T_DATA, r.scid, r.seqnum) + r.data
    if isinstance(r, Ack):
        return bytes([T_ACK]) + _U32.pack(r.resp_seqnum)
    if isinstance(r, Open):
        return _TAG_TWO_U32.pack(T_OPEN, r.scid, r.seqnum) + r.subprotocol.encode("utf-8")
    if isinstance(r, Close):
        return _TAG_TWO_U32.pack(T_CLOSE, r.scid, r.seqnum)
    if isinstance(r, Ping):
        return bytes([T_PING]) + r.ping_id
    if isinstance(r, Pong):
        return bytes([T_PONG]) + r.ping_id
    if isinstance(r, KCM):
        return _KCM_BYTES
    raise TypeError(f"not a Dilation record: {r!r}")


def encode_record_parts(r):
    """(head, body) with ``head + body == encode_record(r)``: a DATA
    payload is not copied into its record (the framer encrypts from it)."""
    if isinstance(r, Data):
        return _TAG_TWO_U32.pack(T_DATA, r.scid, r.seqnum), r.data
    return encode_record(r), b""


def parse_record_pieces(pieces):
    """parse_record of ``b"".join(pieces)``, copying a large DATA payload
    once (out of the pieces) instead of twice (join, then slice)."""
    if len(pieces) == 1:
        return parse_record(pieces[0])
    first = pieces[0]
    if len(first) >= 9 and first[0] == T_DATA:
        scid, seqnum = _TWO_U32.unpack_from(first, 1)
        return data_unchecked(scid, seqnum, b"".join([memoryview(first)[9:], *pieces[1:]]))
    return parse_record(b"".join(pieces))


def _exact(plaintext, length, name):
    if len(plaintext) != length:
        raise RecordError(f"{name} record must be {length} bytes, got {len(plaintext)}")


def parse_record(plaintext: bytes):
    """The record in one L2 frame's plaintext; RecordError if it is none."""
    if not plaintext:
        raise RecordError("empty plaintext: no record tag")
    tag = plaintext[0]
    if tag == T_DATA:
        if len(plaintext) < 9:
            raise RecordError(f"DATA record needs at least 9 bytes, got {len(plaintext)}")
        scid, seqnum = _TWO_U32.unpack_from(plaintext, 1)
        return data_unchecked(scid, seqnum, bytes(plaintext[9:]))
    if tag == T_ACK:
        _exact(plaintext, 5, "ACK")
        return Ack(_U32.unpack_from(plaintext, 1)[0])
    if tag == T_OPEN:
        if len(plaintext) < 9:
            raise RecordError(f"OPEN record needs at least 9 bytes, got {len(plaintext)}")
        scid, seqnum = _TWO_U32.unpack_from(plaintext, 1)
        try:
            name = bytes(plaintext[9:]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise RecordError(f"OPEN subprotocol name is not UTF-8: {e}") from None
        return Open(scid, seqnum, name)
    if tag == T_CLOSE:
        _exact(plaintext, 9, "CLOSE")
        scid, seqnum = _TWO_U32.unpack_from(plaintext, 1)
        return Close(scid, seqnum)
    if tag == T_PING:
        _exact(plaintext, 5, "PING")
        return Ping(bytes(plaintext[1:5]))
    if tag == T_PONG:
        _exact(plaintext, 5, "PONG")
        return Pong(bytes(plaintext[1:5]))
    if tag == T_KCM:
        _exact(plaintext, 1, "KCM")
        return KCM()
    raise RecordError(f"unknown record tag 0x{tag:02x}")
