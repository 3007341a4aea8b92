"""Transmission framing (P2P-D3.1): a 6-byte header (00, 00000ccc, u32
length after compression) and a body of whole messages. Sans-I/O."""

import struct

HEADER = struct.Struct("!BBL")


class FramingError(ValueError):
    """A transmission that cannot be trusted: close the connection."""


def encode_transmission(method, body):
    """The header for an already compressed body (spec 002 `make_tx`)."""
    return HEADER.pack(0, method & 7, len(body)) + body


class TransmissionDecoder:
    """Bytes in, (method, compressed body) out. The length is checked as
    soon as the header is complete, so an oversize claim is refused before
    anything is buffered for it (P2P-D6.1)."""

    def __init__(self, max_length):
        self._max = max_length
        self._buffer = bytearray()
        self._failed = False

    def feed(self, data):
        """Every transmission completed by `data`, in order; FramingError
        on reserved bits or an oversize length."""
        if self._failed:
            raise FramingError("decoder already failed")
        self._buffer += data
        out = []
        while len(self._buffer) >= HEADER.size:
            zero, options, length = HEADER.unpack_from(self._buffer)
            if zero or options & 0xF8:
                self._failed = True
                raise FramingError("reserved transmission bits set")
            if length > self._max:
                self._failed = True
                raise FramingError("transmission length over the maximum")
            end = HEADER.size + length
            if len(self._buffer) < end:
                break
            out.append((options & 7, bytes(self._buffer[HEADER.size:end])))
            del self._buffer[:end]
        return out

    def pending(self):
        return len(self._buffer)
