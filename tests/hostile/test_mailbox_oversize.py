"""The Mailbox server against a client that sends one 64 MB message
(docs/security.md, "Mailbox server"): the server says why before it closes
(an `error`, Mailbox server protocol, "Connection-Specific
(Client-to-Server) Messages", then a WebSocket close 1009 with the same
reason) and reads the rest of
the message instead of resetting the connection while the client still
sends, so a client that writes its whole message before reading (a
blocking socket, here in a thread) gets every byte out and then reads
why. The server serves others afterwards."""
import base64
import json
import os
import socket
import struct

from twisted.internet import reactor, threads
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from ..server._client import happy_exchange

SIZE = 64 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)


def _read_frame(sock, pending):
    """(opcode, payload, rest) of the next unmasked server frame."""
    def need(n):
        nonlocal pending
        while len(pending) < n:
            data = sock.recv(65536)
            if not data:
                raise EOFError(f"closed with {pending!r} pending")
            pending += data
    need(2)
    opcode, length, at = pending[0] & 0x0F, pending[1] & 0x7F, 2
    if length == 126:
        need(4)
        length, at = struct.unpack("!H", pending[2:4])[0], 4
    elif length == 127:
        need(10)
        length, at = struct.unpack("!Q", pending[2:10])[0], 10
    need(at + length)
    return opcode, pending[at:at + length], pending[at + length:]


def oversize_client(port):
    """Handshake, send one SIZE-byte text message whole (a reset while
    sending raises), then read the frames the server sent up to its close."""
    s = socket.create_connection(("127.0.0.1", port))
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        pending = b""
        while b"\r\n\r\n" not in pending:
            pending += s.recv(65536)
        pending = pending.split(b"\r\n\r\n", 1)[1]
        opcode, welcome, pending = _read_frame(s, pending)
        assert b"welcome" in welcome, welcome
        # a zero mask key: the payload goes as it is
        s.sendall(bytes([0x81, 0x80 | 127]) + struct.pack("!Q", SIZE) + b"\0\0\0\0")
        for _ in range(SIZE // len(CHUNK)):
            s.sendall(CHUNK)
        frames = []
        while not frames or frames[-1][0] != 8:
            opcode, payload, pending = _read_frame(s, pending)
            frames.append((opcode, payload))
        return frames
    finally:
        s.close()


class Oversize(unittest.TestCase):
    timeout = 180

    @inlineCallbacks
    def test_64_mb_message(self):
        """A 64 MB message: every byte of it is taken, then an `error` that
        says the size and the limit, then a close 1009 with that reason.
        The server still serves a whole exchange."""
        srv = yield start_mailbox_server(reactor)
        self.addCleanup(srv.stop)
        port = int(srv.url.rsplit(":", 1)[1].split("/")[0])
        frames = yield threads.deferToThread(oversize_client, port)
        why = (f"message too large: {SIZE} bytes, this server accepts at most "
               f"{1024 * 1024} bytes per message")
        (text_op, error), (close_op, close) = frames
        self.assertEqual((text_op, close_op), (1, 8))
        error = json.loads(error)
        self.assertEqual((error["type"], error["error"]), ("error", why))
        self.assertEqual(struct.unpack("!H", close[:2])[0], 1009)
        self.assertEqual(close[2:].decode(), why)
        yield happy_exchange(reactor, srv.url)
