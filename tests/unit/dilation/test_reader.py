"""The selected connection's own reads (wormhole._dilation._reader): frames
cut in one kept buffer, a frame split across reads completed in place, the
per-frame limit, frames larger than the buffer, the framer's tail taken
over."""

import struct

from twisted.trial import unittest

from wormhole._dilation import _reader
from wormhole._dilation._framing import FrameReader, FramingError

from .fakes import FakeSocket


def framed(*payloads):
    return b"".join(struct.pack(">L", len(p)) + p for p in payloads)


def reader(incoming, chunk=10 ** 9, max_frame=1 << 24, buffered=b""):
    sock = FakeSocket()
    sock.incoming, sock.chunk = incoming, chunk
    return sock, _reader.SocketReader(sock, max_frame, buffered)


def read_all(r, sock):
    """Every frame, as bytes, until the socket is empty."""
    out = []
    while sock.incoming:
        out += [bytes(f) for f in r.read()]
    return out


class Frames(unittest.TestCase):
    def test_whole_frames(self):
        sock, r = reader(framed(b"a", b"bc", b""))
        self.assertEqual([bytes(f) for f in r.read()], [b"a", b"bc", b""])
        self.assertEqual(r.buffered(), 0)

    def test_any_cut(self):
        """Cut after every number of bytes, the same frames come out."""
        payloads = [bytes([i]) * (i * 37 % 300) for i in range(40)]
        data = framed(*payloads)
        for chunk in (1, 2, 3, 5, 7, 64, 1000, 4096):
            sock, r = reader(data, chunk=chunk)
            self.assertEqual(read_all(r, sock), payloads, chunk)
            self.assertEqual(r.buffered(), 0)

    def test_frames_across_many_reads_and_the_buffer_end(self):
        """Frames of 100 KiB through reads of 256 KiB keep crossing the end
        of the 1 MiB buffer: the tail moves to its front."""
        payloads = [bytes([i % 251]) * 100_000 for i in range(60)]
        sock, r = reader(framed(*payloads))
        self.assertEqual(read_all(r, sock), payloads)

    def test_frame_larger_than_the_buffer(self):
        big = bytes(range(256)) * (3 * _reader.BUFFER_SIZE // 256)
        sock, r = reader(framed(b"x", big, b"y"))
        self.assertEqual(read_all(r, sock), [b"x", big, b"y"])
        # back to the usual buffer once that frame is gone
        sock.incoming = framed(b"z")
        self.assertEqual([bytes(f) for f in r.read()], [b"z"])
        self.assertEqual(len(r._buf), _reader.BUFFER_SIZE)

    def test_frame_over_the_limit(self):
        sock, r = reader(struct.pack(">L", 101) + b"x", max_frame=100)
        self.assertRaises(FramingError, r.read)

    def test_end_of_stream(self):
        sock, r = reader(b"")
        sock.eof = True
        self.assertIsNone(r.read())

    def test_nothing_to_read(self):
        sock, r = reader(b"")
        self.assertRaises(BlockingIOError, r.read)

    def test_takes_over_the_framers_tail(self):
        data = framed(b"first", b"second" * 1000, b"third")
        f = FrameReader(b"L\n")
        frames = f.add_data(b"L\n" + data[:30])
        self.assertEqual([bytes(x) for x in frames], [b"first"])
        sock, r = reader(data[30:], buffered=f.take_buffered())
        self.assertEqual(f.buffered(), 0)
        self.assertEqual(read_all(r, sock), [b"second" * 1000, b"third"])
