"""How a selected L2 connection reads its socket (docs/performance.md,
"Dilation").

Twisted's TCP transport reads into a fresh ``bytes`` of its buffer size each
time (``socket.recv``), and a frame cut by the end of a read has to be
joined from two of them (``_framing.FrameReader``). ``SocketReader`` reads
with ``recv_into`` into one buffer it keeps and cuts the frames there, as
memoryviews: a frame cut by a read is completed in place by the next one.
A frame is therefore valid only until the next ``read()``; the connection
opens each frame before reading again (it stops reading while paused, and
copies any frame it still holds before it reads).

Only the framing after the handshake is done here (4-byte length, then the
Noise messages: Dilation protocol, "L2 Message Framing"), with the same
per-frame limit as ``FrameReader``, which hands over what it had buffered.
"""

import struct

from ._framing import FramingError

_LENGTH = struct.Struct(">L")
# how much one recv_into may take: the size of Twisted's reads
# (_connection.TRANSPORT_BUFFER)
READ_SIZE = 1 << 18
# the kept buffer: room for a few reads, so the unfinished tail is moved
# to its front only every few reads (a frame larger than the buffer gets a
# larger one, up to the frame limit, until the buffer is empty again)
BUFFER_SIZE = 1 << 20


class SocketReader:
    """``read()``: one ``recv_into``; the frames now complete, as
    memoryviews of the kept buffer, or None at the end of the stream.
    OSError as ``recv_into`` raises it (BlockingIOError: nothing to read);
    FramingError for a frame over ``max_frame``."""

    def __init__(self, sock, max_frame, buffered=b""):
        self._recv_into = sock.recv_into
        self._max_frame = max_frame
        self._new_buffer(max(BUFFER_SIZE, len(buffered) + READ_SIZE))
        self._view[:len(buffered)] = buffered
        self._start, self._end = 0, len(buffered)
        # bytes the frame at _start needs in all (length prefix included),
        # once its length is known and it is not complete
        self._need = 0

    def _new_buffer(self, size):
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)

    def buffered(self):
        """Bytes of an unfinished frame held until the rest arrives."""
        return self._end - self._start

    def _make_room(self):
        """Move the unfinished tail to the front of the buffer (or of a
        larger one for a frame that needs it), so a whole read fits."""
        start, end = self._start, self._end
        size = len(self._buf)
        want = max(BUFFER_SIZE, self._need + READ_SIZE)
        if want > size or (size > BUFFER_SIZE and want < size):
            old = self._view[start:end]
            self._new_buffer(want)
            self._view[:end - start] = old
        elif start:
            self._view[:end - start] = self._view[start:end]
        self._start, self._end = 0, end - start

    def read(self):
        size = len(self._buf)
        if self._start == self._end:
            # everything read was a whole frame: start again at the front
            self._start = self._end = 0
            if size > BUFFER_SIZE:
                self._new_buffer(BUFFER_SIZE)
        elif self._end + READ_SIZE > size or self._start + self._need > size:
            self._make_room()
        end = self._end
        n = self._recv_into(self._view[end:end + READ_SIZE])
        if not n:
            return None
        end += n
        self._end = end
        buf, view, limit = self._buf, self._view, self._max_frame
        pos = self._start
        frames = []
        self._need = 0
        while end - pos >= 4:
            (length,) = _LENGTH.unpack_from(buf, pos)
            if length > limit:
                raise FramingError(
                    f"peer announced a frame of {length} bytes; the limit is "
                    f"{limit} (docs/security.md)")
            stop = pos + 4 + length
            if stop > end:
                self._need = 4 + length
                break
            frames.append(view[pos + 4:stop])
            pos = stop
        self._start = pos
        return frames
