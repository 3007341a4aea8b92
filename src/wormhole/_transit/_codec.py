"""Transit's bytes on the wire, sans-I/O (Transit protocol, "Records",
"Handshake", "Relay").

Everything here takes bytes and returns bytes or records; nothing touches a
socket or a clock, so hypothesis can split and tamper with the stream freely
(tests/unit/transit/test_codec.py). The constants were checked on the wire
against the reference 0.24 (tests/data/transit_vectors.json).
"""

import struct

from nacl.exceptions import CryptoError

from .._crypto import derive_key
from ..util import bytes_to_hexstr
from ._box import MAC_SIZE, NONCE_SIZE, _Box, _Scratch

# Transit protocol, "Handshake": HKDF contexts of the two handshakes
SENDER_HANDSHAKE_CONTEXT = b"transit_sender"
RECEIVER_HANDSHAKE_CONTEXT = b"transit_receiver"
# Transit protocol, "Relay": the relay token
RELAY_TOKEN_CONTEXT = b"transit_relay_token"
# one SecretBox key per direction, named after the side that sends with it
SENDER_RECORD_KEY_CONTEXT = b"transit_record_sender_key"
RECEIVER_RECORD_KEY_CONTEXT = b"transit_record_receiver_key"

RELAY_OK = b"ok\n"
GO = b"go\n"
NEVERMIND = b"nevermind\n"

LENGTH_PREFIX = struct.Struct(">L")
# Transit protocol, "Records": 4-byte length, so no frame may exceed
# 2**32 - 1 bytes
MAX_FRAME = 2 ** 32 - 1
MAX_RECORD = MAX_FRAME - NONCE_SIZE - MAC_SIZE
# What we accept from a peer (docs/security.md, "Transit"): the reference,
# wormhole-william and our own sender write file records of at most 64 KiB,
# so 16 MiB leaves room for any honest application while a 32-bit length
# is never buffered. A file receiver lowers it to the size of the file it
# accepted (RecordPipe.connectConsumer).
DEFAULT_MAX_RECORD = 16 * 1024 * 1024


def _check_key(key):
    if not isinstance(key, bytes):
        raise TypeError(f"transit key must be bytes, not {type(key).__name__}")


def sender_handshake(key: bytes) -> bytes:
    """SENDER-HANDSHAKE (Transit protocol, "Handshake"):
    ``transit sender HEX ready\\n\\n``."""
    _check_key(key)
    token = bytes_to_hexstr(derive_key(key, SENDER_HANDSHAKE_CONTEXT))
    return b"transit sender " + token.encode("ascii") + b" ready\n\n"


def receiver_handshake(key: bytes) -> bytes:
    """RECEIVER-HANDSHAKE (Transit protocol, "Handshake"):
    ``transit receiver HEX ready\\n\\n``."""
    _check_key(key)
    token = bytes_to_hexstr(derive_key(key, RECEIVER_HANDSHAKE_CONTEXT))
    return b"transit receiver " + token.encode("ascii") + b" ready\n\n"


def relay_handshake(key: bytes, side: str) -> bytes:
    """RELAY-HANDSHAKE with a side (Transit protocol, "Relay"; File-transfer
    protocol, "Transit": ``relay-v1``).

    The side lets the relay tell our two connections from our peer's when
    both of us dial it with the same token.
    """
    _check_key(key)
    if not (isinstance(side, str) and len(side) == 16
            and all(c in "0123456789abcdef" for c in side)):
        raise ValueError(f"relay side must be 16 lower-case hex digits, not {side!r}")
    token = bytes_to_hexstr(derive_key(key, RELAY_TOKEN_CONTEXT))
    return f"please relay {token} for side {side}\n".encode("ascii")


def record_keys(key: bytes, is_sender: bool):
    """(key we encrypt with, key we decrypt with) for our role."""
    _check_key(key)
    sender_key = derive_key(key, SENDER_RECORD_KEY_CONTEXT)
    receiver_key = derive_key(key, RECEIVER_RECORD_KEY_CONTEXT)
    if is_sender:
        return sender_key, receiver_key
    return receiver_key, sender_key


def nonce_for(counter: int) -> bytes:
    """The nonce of record number ``counter``: 24 bytes, big-endian."""
    return counter.to_bytes(NONCE_SIZE, "big")


class Expect:
    """Match an exact token at the start of a byte stream.

    ``feed(data)`` returns ``(None, b"")`` while the bytes so far are a
    prefix of the token, ``(True, leftover)`` once all of it arrived (the
    leftover belongs to the next layer), ``(False, b"")`` as soon as any
    byte differs: the Transit protocol, "Handshake", says to hang up on
    anything else, and there is no point waiting for the rest of a wrong
    line.
    """

    def __init__(self, token: bytes):
        self._token = token
        self._got = b""

    def feed(self, data: bytes):
        got = self._got + data
        n = len(self._token)
        if got[:n] != self._token[:len(got)]:
            return False, b""
        if len(got) < n:
            self._got = got
            return None, b""
        self._got = b""
        return True, got[n:]


class BadRecord(Exception):
    """A record failed to decrypt or arrived out of order (Transit protocol,
    "Records").

    The only safe answer is to drop the connection. ``records`` holds the
    good records decoded from the same input before the bad one: they are
    authentic and in order, so they may still be delivered.
    """

    records = ()


class RecordEncoder:
    """Plaintext records -> length-prefixed SecretBox frames (Transit
    protocol, "Records").

    A frame is ``length(4) | nonce(24) | MAC(16) | ciphertext``, the
    nonce being the record counter. ``encode`` builds the whole frame in
    one buffer: the libsodium "easy" call writes MAC and ciphertext right
    after the header we put there, so a record costs one encryption and
    one copy into ``bytes`` (``SecretBox.encrypt`` plus a concatenation
    cost three more copies of every byte; docs/performance.md).
    """

    def __init__(self, key: bytes):
        self._box = _Box(key)
        self._counter = 0
        self._scratch = None  # made by the first encode_many

    def encode(self, record: bytes) -> bytes:
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"a record must be bytes, not {type(record).__name__}")
        if len(record) > MAX_RECORD:
            raise ValueError(f"a record may hold at most {MAX_RECORD} bytes")
        nonce = nonce_for(self._counter)
        self._counter += 1
        return self._box.seal_frame(record, nonce)

    def encode_many(self, records) -> bytes:
        """The frames of ``records``, in order, as one ``bytes``: the same
        bytes as ``b"".join(map(encode, records))``, sealed into a reused
        buffer and copied out once for the whole batch."""
        records = list(records)
        for record in records:
            if not isinstance(record, (bytes, bytearray, memoryview)):
                raise TypeError(f"a record must be bytes, not {type(record).__name__}")
            if len(record) > MAX_RECORD:
                raise ValueError(f"a record may hold at most {MAX_RECORD} bytes")
        if self._scratch is None:
            self._scratch = _Scratch()
        first, self._counter = self._counter, self._counter + len(records)
        return self._box.seal_frames(records, first, self._scratch)


class RecordDecoder:
    """Bytes in any split -> plaintext records, checking the counter.

    A frame whose nonce is not the next counter value (lost, replayed or
    reordered record) or that does not decrypt raises BadRecord; after
    that the decoder refuses everything, so nothing from a dropped
    connection is ever delivered.

    Every frame length is checked against ``max_record`` (plus the nonce
    and MAC) as soon as its 4 bytes arrive, before any of the frame is
    kept: a larger one raises BadRecord.

    Whole frames inside one ``feed`` are decrypted straight out of the
    caller's bytes (a memoryview, no copy); only a frame cut by the
    stream's split is gathered in ``_buf``. Socket reads are larger than
    a record in bulk transfers (``_pipe.BULK_BUFFER``), so many frames
    are never copied before decryption.
    """

    def __init__(self, key: bytes, max_record=DEFAULT_MAX_RECORD):
        self._box = _Box(key)
        self._counter = 0
        self._nonce = nonce_for(0)
        self._buf = bytearray()
        self._broken = False
        self.set_max_record(max_record)

    def set_max_record(self, max_record):
        """From now on, refuse records longer than ``max_record`` bytes."""
        self._max_record = max_record
        self._max_frame = max_record + NONCE_SIZE + MAC_SIZE

    def buffered(self):
        """Bytes of an unfinished frame held until the rest arrives."""
        return len(self._buf)

    def _check_length(self, length):
        if length > self._max_frame:
            self._broken = True
            raise BadRecord(
                f"record number {self._counter} announced {length - NONCE_SIZE - MAC_SIZE} "
                f"bytes; the limit is {self._max_record} (docs/security.md)")

    def feed(self, data: bytes):
        if self._broken:
            raise BadRecord("this connection already delivered a bad record")
        records = []
        try:
            self._feed(memoryview(data), records)
        except BadRecord as e:
            e.records = records
            raise
        return records

    def _feed(self, view, records):
        pos, end = 0, len(view)
        buf = self._buf
        if buf:
            # finish the frame a previous split cut
            if len(buf) < 4:
                pos = min(4 - len(buf), end)
                buf += view[:pos]
                if len(buf) < 4:
                    return
            length = LENGTH_PREFIX.unpack_from(buf)[0]
            self._check_length(length)
            total = 4 + length
            take = min(total - len(buf), end - pos)
            buf += view[pos:pos + take]
            pos += take
            if len(buf) < total:
                return
            with memoryview(buf) as frame:
                records.append(self._open(frame[4:]))
            del buf[:]
        unpack = LENGTH_PREFIX.unpack_from
        limit = self._max_frame
        while end - pos >= 4:
            length = unpack(view, pos)[0]
            if length > limit:
                self._check_length(length)
            stop = pos + 4 + length
            if stop > end:
                break
            records.append(self._open(view[pos + 4:stop]))
            pos = stop
        if pos < end:
            buf += view[pos:]

    def _open(self, frame):
        try:
            if len(frame) < NONCE_SIZE + MAC_SIZE:
                raise BadRecord(f"frame of {len(frame)} bytes is too short for a record")
            nonce = frame[:NONCE_SIZE]
            if nonce != self._nonce:
                got = int.from_bytes(nonce, "big")
                raise BadRecord(f"record number {got} arrived, expected {self._counter}")
            try:
                plaintext = self._box.open(frame[NONCE_SIZE:], self._nonce)
            except CryptoError as e:
                raise BadRecord(f"record number {self._counter} did not decrypt") from e
        except BadRecord:
            self._broken = True
            raise
        self._counter += 1
        self._nonce = nonce_for(self._counter)
        return plaintext
