"""L2 bytes on the wire, sans-I/O (Dilation protocol, "L2 protocol",
"L2 Message Framing").

After connecting, each side sends its handshake line; everything after the
peer's line is frames: a 4-byte big-endian length, then that many bytes of
Noise messages laid end to end with no inner length. A plaintext longer
than 65519 bytes is cut into 65519-byte pieces, each encrypted on its own
(65535 bytes of ciphertext), so the reader cuts the frame every 65535 bytes.
The Noise handshake messages travel in frames too.

Nothing here touches a socket: the connection protocol (``_connection``)
feeds bytes in and writes what comes out.
"""

import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from noise.connection import NoiseConnection

from .._crypto import derive_key
from ._records import parse_record, parse_record_pieces

LEADER_HANDSHAKE = b"Magic-Wormhole Dilation Handshake v1 Leader\n\n"
FOLLOWER_HANDSHAKE = b"Magic-Wormhole Dilation Handshake v1 Follower\n\n"
NOISE_PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s"
DILATION_KEY_CONTEXT = b"dilation-v1"

NOISE_MAX_CIPHERTEXT = 65535  # Dilation protocol, "L2 Message Framing": Noise's own limit
NOISE_MAC = 16
NOISE_MAX_PLAINTEXT = NOISE_MAX_CIPHERTEXT - NOISE_MAC  # 65519
MAX_FRAME = 2 ** 32 - 1
# What we accept from a peer (docs/security.md, "Dilation"). The Noise
# NNpsk0 handshake messages are 48 bytes each, so the one handshake frame
# each side reads never needs more than HANDSHAKE_MAX_FRAME; anyone who can
# reach a listening port gets that far without knowing the key. After it, a
# frame holds one record: the reference writes an application's write() as
# one DATA record (300 kB in our interop test), so records above 64 KiB are
# legal, but 32 bits of length are not buffered for anyone.
HANDSHAKE_MAX_FRAME = 1024
DEFAULT_MAX_FRAME = 16 * 1024 * 1024
_LENGTH = struct.Struct(">L")
# a transport message's nonce: 4 zero bytes, then the 64-bit little-endian
# counter (Noise spec 5.1, 12.4), one pack per message
_NONCE = struct.Struct("<4xQ").pack
# The plaintext of a frame of at most this many Noise messages is opened
# into one buffer kept by the session, so a DATA record's payload is made
# by one copy out of it, with no plaintext object per message: the 64 KiB
# write of a bulk stream is a 65545-byte record, two messages (docs/
# performance.md, "Dilation"). Longer frames take the general path.
_SCRATCH_MESSAGES = 2
# whether `cryptography` can open into a buffer (decrypt_into); without
# it every frame takes the general path
_HAVE_DECRYPT_INTO = hasattr(ChaCha20Poly1305, "decrypt_into")


class FramingError(Exception):
    """The peer broke L2 (wrong handshake line, undecryptable Noise): the
    connection must be dropped (Dilation protocol, "L2 protocol")."""


def derive_dilation_key(master_key: bytes) -> bytes:
    """Dilation protocol, "L2 protocol": HKDF-SHA256 of the PAKE key, no
    salt, info ``dilation-v1``, 32 bytes; the Noise PSK of every L2
    connection of this wormhole."""
    return derive_key(master_key, DILATION_KEY_CONTEXT, 32)


def handshake_lines(role_is_leader: bool):
    """(what we send, what we expect) for our role."""
    if role_is_leader:
        return LEADER_HANDSHAKE, FOLLOWER_HANDSHAKE
    return FOLLOWER_HANDSHAKE, LEADER_HANDSHAKE


def frame(payload: bytes) -> bytes:
    """The 4-byte length prefix plus payload."""
    if len(payload) > MAX_FRAME:
        raise ValueError(f"frame of {len(payload)} bytes exceeds 2**32-1")
    return _LENGTH.pack(len(payload)) + payload


class FrameReader:
    """Splits the inbound byte stream: first the peer's handshake line
    (checked byte by byte, so a stray HTTP server fails at once), then
    length-prefixed frames. ``add_data`` returns the frames now complete.

    Every length is checked as soon as its 4 bytes are read, before any of
    the frame is kept: the first frame (the peer's Noise handshake message)
    may hold at most ``handshake_max`` bytes, every later one ``max_frame``.
    What is buffered is therefore at most one frame under its limit plus
    the rest of the current read.

    Frames are returned as memoryviews of the (immutable) bytes read, so a
    frame that arrived within one read is never copied; only a frame split
    across reads is joined once.
    """

    def __init__(self, expected_line: bytes, max_frame=DEFAULT_MAX_FRAME,
                 handshake_max=HANDSHAKE_MAX_FRAME):
        self._max_frame = max_frame
        # the limit of the next frame: the handshake's, then max_frame
        self._limit = handshake_max
        self._expected = expected_line
        self._matched = 0
        self._chunks = []   # the unfinished tail: bytes/memoryviews
        self._have = 0
        self._need = 4      # bytes needed before the tail can advance

    def add_data(self, data) -> list:
        if self._matched < len(self._expected):
            need = len(self._expected) - self._matched
            head = bytes(data[:need])
            if head != self._expected[self._matched:self._matched + len(head)]:
                raise FramingError(
                    f"bad Dilation handshake line: expected {self._expected!r}, "
                    f"got {bytes(data[:80])!r} after {self._matched} good bytes")
            self._matched += len(head)
            data = data[need:]
            if not data:
                return []
        if not isinstance(data, bytes):
            data = bytes(data)
        frames = []
        start = 0
        if self._chunks:
            # finish the frame split across reads: copy only that frame,
            # not the whole new read behind it
            self._chunks.append(data)
            self._have += len(data)
            if self._have < self._need:
                return []
            tail = b"".join(self._chunks[:-1])
            self._chunks = []
            self._have = 0
            if len(tail) < 4:
                k = 4 - len(tail)
                tail += data[:k]  # the length prefix; at most 3 bytes copied
                start = k
                (length,) = _LENGTH.unpack_from(tail, 0)
                self._check(length)
                if len(data) - start < length:
                    self._chunks = [tail, memoryview(data)[start:]]
                    self._have = len(tail) + len(data) - start
                    self._need = 4 + length
                    return []
            else:
                (length,) = _LENGTH.unpack_from(tail, 0)
            self._limit = self._max_frame
            rest = 4 + length - len(tail)  # bytes of this frame in data
            frames.append(b"".join([memoryview(tail)[4:],
                                    memoryview(data)[start:start + rest]]))
            start += rest
        mv = memoryview(data)
        pos, n = start, len(data)
        need = 4
        while n - pos >= 4:
            (length,) = _LENGTH.unpack_from(data, pos)
            if length > self._limit:  # the per-frame path: no call unless refused
                self._check(length)
            end = pos + 4 + length
            if end > n:
                need = 4 + length
                break
            frames.append(mv[pos + 4:end])
            self._limit = self._max_frame
            pos = end
        else:
            need = 4
        if pos < n:
            self._chunks = [mv[pos:]]
            self._have = n - pos
            self._need = need
        return frames

    def buffered(self) -> int:
        """Bytes of an unfinished frame held until the rest arrives."""
        return sum(len(c) for c in self._chunks)

    def _check(self, length):
        if length > self._limit:
            what = "handshake " if self._limit != self._max_frame else ""
            raise FramingError(
                f"peer announced a {what}frame of {length} bytes; the limit is "
                f"{self._limit} (docs/security.md)")


class NoiseSession:
    """One L2 connection's Noise NNpsk0 state (Dilation protocol, "L2
    protocol"): the Leader is the initiator (``-> psk, e``), the Follower the
    responder (``<- e, ee``); handshake payloads are empty."""

    def __init__(self, dilation_key: bytes, is_leader: bool):
        n = NoiseConnection.from_name(NOISE_PROTOCOL)
        n.set_psks(psk=dilation_key)
        if is_leader:
            n.set_as_initiator()
        else:
            n.set_as_responder()
        n.start_handshake()
        self._noise = n
        self._enc = self._dec = None
        self._enc_n = self._dec_n = 0
        self._scratch = memoryview(bytearray(_SCRATCH_MESSAGES * NOISE_MAX_PLAINTEXT))

    def handshake_done(self) -> bool:
        if self._enc is None and self._noise.handshake_finished:
            self._take_transport_keys()
        return self._enc is not None

    def _take_transport_keys(self):
        # Noise transport messages are ChaChaPoly with an empty AD and a
        # 64-bit little-endian counter nonce (Noise spec 5.1, 12.4). We run
        # them on `cryptography` directly: the same bytes as the noise
        # package's CipherState, without its per-message checks and copies,
        # and on memoryview slices of what we read.
        p = self._noise.noise_protocol
        enc, dec = p.cipher_state_encrypt, p.cipher_state_decrypt
        self._enc, self._enc_n = ChaCha20Poly1305(bytes(enc.k)), enc.n
        self._dec, self._dec_n = ChaCha20Poly1305(bytes(dec.k)), dec.n

    def messages_counted(self):
        """(Noise messages sent, received) since the handshake: the L3
        keepalive tells from them whether anything went either way."""
        return self._enc_n, self._dec_n

    def write_handshake(self) -> bytes:
        """Our handshake message, framed."""
        return frame(bytes(self._noise.write_message()))

    def read_handshake(self, message: bytes):
        try:
            self._noise.read_message(bytes(message))
        except Exception as e:  # noqa: BLE001 -- noise raises several types for bad input
            raise FramingError(f"bad Noise handshake message: {e!r}") from None

    def _seal(self, piece):
        n = self._enc_n
        self._enc_n = n + 1
        return self._enc.encrypt(_NONCE(n), piece, None)

    def _open(self, piece):
        n = self._dec_n
        try:
            out = self._dec.decrypt(_NONCE(n), piece, None)
        except InvalidTag:
            raise FramingError("undecryptable Noise message (wrong key or corrupted)") from None
        self._dec_n = n + 1
        return out

    def encrypt_parts(self, head: bytes, body=b"") -> list:
        """The frame of the plaintext ``head + body`` as a list of byte
        strings to write in order (length prefix, then each Noise message):
        pieces of at most 65519 bytes, each its own Noise message, behind
        one length prefix (Dilation protocol, "L2 Message Framing"). Only the
        first piece is assembled; the rest are encrypted from slices of
        ``body``."""
        self.handshake_done()
        if len(head) > NOISE_MAX_PLAINTEXT:
            raise ValueError("a record header cannot exceed one Noise message")
        total = len(head) + len(body)
        first = NOISE_MAX_PLAINTEXT - len(head)
        if len(body) <= first:
            c = self._seal(head + body if head else body)
            return [_LENGTH.pack(len(c)), c]
        mv = memoryview(body)
        parts = [self._seal(head + mv[:first])]
        for i in range(first, len(mv), NOISE_MAX_PLAINTEXT):
            parts.append(self._seal(mv[i:i + NOISE_MAX_PLAINTEXT]))
        length = total + NOISE_MAC * len(parts)
        if length > MAX_FRAME:
            raise ValueError(f"frame of {length} bytes exceeds 2**32-1")
        return [_LENGTH.pack(length)] + parts

    def encrypt_frame(self, plaintext: bytes) -> bytes:
        """One record as one frame, as a single byte string."""
        return b"".join(self.encrypt_parts(b"", bytes(plaintext)))

    def decrypt_pieces(self, ciphertext) -> list:
        """The plaintexts of one frame's Noise messages, in order (their
        concatenation is the record; see _records.parse_record_pieces)."""
        self.handshake_done()
        if len(ciphertext) <= NOISE_MAX_CIPHERTEXT:
            return [self._open(ciphertext)]
        mv = memoryview(ciphertext)
        return [self._open(mv[i:i + NOISE_MAX_CIPHERTEXT])
                for i in range(0, len(mv), NOISE_MAX_CIPHERTEXT)]

    def decrypt_record(self, ciphertext):
        """The record in one frame (after the handshake): what
        ``parse_record_pieces(self.decrypt_pieces(ciphertext))`` gives,
        opened into the session's buffer when the frame is short enough,
        so a DATA payload is one copy out of it. RecordError for a
        plaintext that is no record, FramingError for one that does not
        open."""
        self.handshake_done()
        size = len(ciphertext)
        if size > _SCRATCH_MESSAGES * NOISE_MAX_CIPHERTEXT or not _HAVE_DECRYPT_INTO:
            return parse_record_pieces(self.decrypt_pieces(ciphertext))
        scratch, open_into = self._scratch, self._dec.decrypt_into
        n = self._dec_n
        end = 0
        try:
            for i in range(0, size, NOISE_MAX_CIPHERTEXT):
                piece = ciphertext[i:i + NOISE_MAX_CIPHERTEXT]
                k = len(piece) - NOISE_MAC
                if k < 0:
                    raise InvalidTag()
                open_into(_NONCE(n), piece, None, scratch[end:end + k])
                n += 1
                end += k
        except InvalidTag:
            raise FramingError("undecryptable Noise message (wrong key or corrupted)") from None
        self._dec_n = n
        # parse_record copies what it keeps (a DATA payload, an OPEN's
        # name): nothing refers to the buffer once it returns
        return parse_record(scratch[:end])

    def decrypt_frame(self, ciphertext) -> bytes:
        """The plaintext of one frame: cut every 65535 bytes, decrypt each."""
        self.handshake_done()
        if len(ciphertext) <= NOISE_MAX_CIPHERTEXT:
            return self._open(ciphertext)
        mv = memoryview(ciphertext)
        return b"".join([self._open(mv[i:i + NOISE_MAX_CIPHERTEXT])
                         for i in range(0, len(mv), NOISE_MAX_CIPHERTEXT)])
