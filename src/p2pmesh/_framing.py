"""Transmission framing (P2P-D3.1): a 6-byte header (00, 00000ccc, u32
length after compression) and a body of whole messages. Sans-I/O."""

import struct

HEADER = struct.Struct("!BBL")


class FramingError(ValueError):
    """A transmission that cannot be trusted: close the connection."""


def encode_transmission(method, body):
    """The header for an already compressed body (P2P mesh protocol, "Serializing": `make_tx`)."""
    return HEADER.pack(0, method & 7, len(body)) + body


class TransmissionDecoder:
    """Bytes in, (method, compressed body) out. The length is checked as
    soon as the header is complete, so an oversize claim is refused before
    anything is buffered for it (P2P-D6.1)."""

    def __init__(self, max_length):
        self._max = max_length
        self._buffer = bytearray()
        self._need = 0
        self._failed = False

    def feed(self, data):
        """Every transmission completed by `data`, in order; FramingError
        on reserved bits or an oversize length."""
        if self._failed:
            raise FramingError("decoder already failed")
        if self._buffer:
            self._buffer += data
            if len(self._buffer) < self._need:
                return []   # still inside one transmission: no copy
            data = bytes(self._buffer)
            self._buffer.clear()
        # whole transmissions are sliced straight out of `data` (one copy,
        # none for a transmission that is all of it)
        out = []
        offset = 0
        while len(data) - offset >= HEADER.size:
            zero, options, length = HEADER.unpack_from(data, offset)
            if zero or options & 0xF8:
                self._failed = True
                raise FramingError("reserved transmission bits set")
            if length > self._max:
                self._failed = True
                raise FramingError("transmission length over the maximum")
            end = offset + HEADER.size + length
            if len(data) < end:
                break
            out.append((options & 7, data[offset + HEADER.size:end]))
            offset = end
        rest = data[offset:]
        self._buffer += rest
        # bytes the buffered transmission needs before it can be read
        self._need = (HEADER.size + HEADER.unpack_from(rest)[2]
                      if len(rest) >= HEADER.size else HEADER.size)
        return out

    def pending(self):
        return len(self._buffer)
