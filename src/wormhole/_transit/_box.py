"""SecretBox for Transit records without the extra copies (Transit protocol,
"Records").

PyNaCl's ``SecretBox`` pads, slices and concatenates every message, and
its bindings take only ``bytes``: at 64 KiB records that is three or four
copies of every byte beside the encryption itself. Here the libsodium
"easy" functions are called through PyNaCl's own cffi module so that a
frame is sealed into one buffer together with its header and a received
frame is opened straight out of the socket's bytes. The bytes on the
wire are the same (``tests/unit/transit/test_codec.py`` checks the
reference's vectors). If that module ever moves, the public bindings
serve, one copy slower.
"""

from nacl import bindings
from nacl.exceptions import CryptoError

try:
    from nacl._sodium import ffi as _ffi
    from nacl._sodium import lib as _lib
except ImportError:  # pragma: no cover - a PyNaCl without its cffi module
    _ffi = _lib = None

NONCE_SIZE = bindings.crypto_secretbox_NONCEBYTES  # 24
MAC_SIZE = bindings.crypto_secretbox_MACBYTES  # 16
KEY_SIZE = bindings.crypto_secretbox_KEYBYTES  # 32
HEADER_SIZE = 4 + NONCE_SIZE


class _Box:
    def __init__(self, key):
        if not isinstance(key, bytes) or len(key) != KEY_SIZE:
            raise ValueError(f"a record key must be {KEY_SIZE} bytes")
        self._key = key
        if _lib is not None:
            # buffers are filled whole by libsodium: no need to zero them
            self._alloc = _ffi.new_allocator(should_clear_after_alloc=False)

    def seal_frame(self, record, nonce):
        """``length | nonce | MAC | ciphertext`` as one ``bytes``."""
        n = len(record)
        body = NONCE_SIZE + MAC_SIZE + n
        header = body.to_bytes(4, "big") + nonce
        if _lib is None:
            return header + bindings.crypto_secretbox_easy(bytes(record), nonce, self._key)
        out = self._alloc("unsigned char[]", HEADER_SIZE + MAC_SIZE + n)
        _ffi.memmove(out, header, HEADER_SIZE)
        src = record if isinstance(record, bytes) else _ffi.from_buffer(record)
        _lib.crypto_secretbox_easy(out + HEADER_SIZE, src, n, nonce, self._key)
        return _ffi.buffer(out)[:]

    def seal_frames(self, records, first_nonce_counter, scratch):
        """Several frames back to back as one ``bytes``.

        Each frame is sealed into ``scratch`` (a ``_Scratch`` the caller
        keeps: one buffer reused for every batch, never allocated per
        record) and the batch is copied out once. A batch is written to
        the transport as one ``bytes``, which Twisted then sends without
        joining it to anything (docs/performance.md).
        """
        if _lib is None:
            return b"".join(self.seal_frame(r, (first_nonce_counter + i).to_bytes(
                NONCE_SIZE, "big")) for i, r in enumerate(records))
        if not records:
            return b""
        total = sum(HEADER_SIZE + MAC_SIZE + len(r) for r in records)
        out = scratch.buffer(total)
        pos, counter, key = 0, first_nonce_counter, self._key
        for record in records:
            n = len(record)
            nonce = counter.to_bytes(NONCE_SIZE, "big")
            _ffi.memmove(out + pos, (NONCE_SIZE + MAC_SIZE + n).to_bytes(4, "big") + nonce,
                         HEADER_SIZE)
            src = record if isinstance(record, bytes) else _ffi.from_buffer(record)
            _lib.crypto_secretbox_easy(out + pos + HEADER_SIZE, src, n, nonce, key)
            pos += HEADER_SIZE + MAC_SIZE + n
            counter += 1
        return _ffi.buffer(out, total)[:]

    def open(self, ciphertext, nonce):
        """The plaintext of MAC+ciphertext (any buffer); CryptoError if forged."""
        n = len(ciphertext) - MAC_SIZE
        if n < 0:
            raise CryptoError("a record is too short for its MAC")
        if _lib is None:
            return bindings.crypto_secretbox_open_easy(bytes(ciphertext), bytes(nonce),
                                                       self._key)
        out = self._alloc("unsigned char[]", max(1, n))
        if _lib.crypto_secretbox_open_easy(out, _ffi.from_buffer(ciphertext),
                                           len(ciphertext), bytes(nonce), self._key) != 0:
            raise CryptoError("a record failed its MAC check")
        return _ffi.buffer(out, n)[:]


class _Scratch:
    """One reusable output buffer for ``seal_frames``, grown on demand.

    A fresh buffer per batch would be a new allocation of >= 128 KiB each
    time, which glibc serves with mmap/munmap and page faults (measured:
    ~50% more sender CPU, docs/performance.md).
    """

    def __init__(self):
        self._buf = None
        self._size = 0
        if _lib is not None:
            self._alloc = _ffi.new_allocator(should_clear_after_alloc=False)

    def buffer(self, size):
        if size > self._size:
            self._buf = self._alloc("unsigned char[]", size)
            self._size = size
        return self._buf
