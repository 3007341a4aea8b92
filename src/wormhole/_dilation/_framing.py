"""L2 bytes on the wire, sans-I/O (spec 000 "L2 protocol", "L2 Message
Framing").

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

from noise.connection import NoiseConnection

from .._crypto import derive_key

LEADER_HANDSHAKE = b"Magic-Wormhole Dilation Handshake v1 Leader\n\n"
FOLLOWER_HANDSHAKE = b"Magic-Wormhole Dilation Handshake v1 Follower\n\n"
NOISE_PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s"
DILATION_KEY_CONTEXT = b"dilation-v1"

NOISE_MAX_CIPHERTEXT = 65535  # spec 000: Noise's own message limit
NOISE_MAC = 16
NOISE_MAX_PLAINTEXT = NOISE_MAX_CIPHERTEXT - NOISE_MAC  # 65519
MAX_FRAME = 2 ** 32 - 1
_LENGTH = struct.Struct(">L")


class FramingError(Exception):
    """The peer broke L2 (wrong handshake line, undecryptable Noise): the
    connection must be dropped (spec 000 "L2 protocol")."""


def derive_dilation_key(master_key: bytes) -> bytes:
    """spec 000: HKDF-SHA256 of the PAKE key, no salt, info ``dilation-v1``,
    32 bytes; the Noise PSK of every L2 connection of this wormhole."""
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
    length-prefixed frames. ``add_data`` returns the frames now complete."""

    def __init__(self, expected_line: bytes):
        self._expected = expected_line
        self._matched = 0
        self._buf = bytearray()
        self._pos = 0

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
        buf = self._buf
        buf += data
        frames = []
        pos = self._pos
        end = len(buf)
        while end - pos >= 4:
            (length,) = _LENGTH.unpack_from(buf, pos)
            if end - pos - 4 < length:
                break
            frames.append(bytes(buf[pos + 4:pos + 4 + length]))
            pos += 4 + length
        # compact only when the consumed head is large: avoids an O(n)
        # move per small frame on a busy stream
        if pos == end:
            buf.clear()
            pos = 0
        elif pos > 1 << 20:
            del buf[:pos]
            pos = 0
        self._pos = pos
        return frames


class NoiseSession:
    """One L2 connection's Noise NNpsk0 state (spec 000 "L2 protocol"):
    the Leader is the initiator (``-> psk, e``), the Follower the responder
    (``<- e, ee``); handshake payloads are empty."""

    def __init__(self, dilation_key: bytes, is_leader: bool):
        n = NoiseConnection.from_name(NOISE_PROTOCOL)
        n.set_psks(psk=dilation_key)
        if is_leader:
            n.set_as_initiator()
        else:
            n.set_as_responder()
        n.start_handshake()
        self._noise = n

    def handshake_done(self) -> bool:
        return self._noise.handshake_finished

    def write_handshake(self) -> bytes:
        """Our handshake message, framed."""
        return frame(bytes(self._noise.write_message()))

    def read_handshake(self, message: bytes):
        try:
            self._noise.read_message(message)
        except Exception as e:  # noise raises several types for bad input
            raise FramingError(f"bad Noise handshake message: {e!r}") from None

    def encrypt_frame(self, plaintext: bytes) -> bytes:
        """One record as one frame: pieces of at most 65519 bytes, each its
        own Noise message, behind one length prefix (spec 000)."""
        enc = self._noise.encrypt
        if len(plaintext) <= NOISE_MAX_PLAINTEXT:
            return frame(enc(bytes(plaintext)))
        mv = memoryview(plaintext)
        parts = [enc(bytes(mv[i:i + NOISE_MAX_PLAINTEXT]))
                 for i in range(0, len(mv), NOISE_MAX_PLAINTEXT)]
        return frame(b"".join(parts))

    def decrypt_frame(self, ciphertext: bytes) -> bytes:
        """The plaintext of one frame: cut every 65535 bytes, decrypt each."""
        dec = self._noise.decrypt
        try:
            if len(ciphertext) <= NOISE_MAX_CIPHERTEXT:
                return bytes(dec(bytes(ciphertext)))
            mv = memoryview(ciphertext)
            return b"".join(bytes(dec(bytes(mv[i:i + NOISE_MAX_CIPHERTEXT])))
                            for i in range(0, len(mv), NOISE_MAX_CIPHERTEXT))
        except FramingError:
            raise
        except Exception as e:
            raise FramingError(f"undecryptable Noise message: {e!r}") from None
