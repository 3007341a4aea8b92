"""A deliberately minimal WebSocket client for the load generator.

The Mailbox server speaks JSON over WebSocket (Mailbox server protocol,
"WebSocket Transport"). The benchmark must measure the server, not the client,
so this client does the least work RFC 6455 allows:

- the opening handshake is one pre-built request; only the status line of
  the answer is checked;
- client frames must be masked (RFC 6455 5.3), but the masking key is not
  checked by servers, so we send the all-zero key: XOR with zero is the
  identity, and a frame costs a header and one concatenation;
- server frames are unmasked; we parse them from one bytearray buffer.

Loopback only: the load generator connects to 127.0.0.1.
"""

import asyncio
import json
import socket
import struct

_ZERO_MASK = b"\x00\x00\x00\x00"
# a fixed key is fine: the server only echoes a digest of it back
_KEY = "d29ybWhvbGUtYmVuY2gtMQ=="

OP_CONT, OP_TEXT, OP_BINARY = 0x0, 0x1, 0x2
OP_CLOSE, OP_PING, OP_PONG = 0x8, 0x9, 0xA


class HandshakeFailed(Exception):
    """The server did not answer the upgrade with 101."""


class ConnectionLostEarly(Exception):
    """The TCP connection ended before the WebSocket closing handshake."""


def encode_frame(opcode, payload):
    """One FIN frame, masked with the zero key (RFC 6455 5.2)."""
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return header + _ZERO_MASK + payload


class FrameParser:
    """Sans-I/O parser of server-to-client frames: feed bytes, get messages.

    Yields (opcode, payload) for complete messages; fragmented data messages
    are reassembled (RFC 6455 5.4), control frames come out as they arrive.
    """

    def __init__(self):
        self._buf = bytearray()
        self._frag_op = None
        self._frag = []

    def feed(self, data):
        buf = self._buf
        buf += data
        out = []
        pos = 0
        end = len(buf)
        while end - pos >= 2:
            b0 = buf[pos]
            b1 = buf[pos + 1]
            n = b1 & 0x7F
            hdr = 2
            if n == 126:
                if end - pos < 4:
                    break
                n = (buf[pos + 2] << 8) | buf[pos + 3]
                hdr = 4
            elif n == 127:
                if end - pos < 10:
                    break
                (n,) = struct.unpack_from("!Q", buf, pos + 2)
                hdr = 10
            if b1 & 0x80:  # a server must not mask (RFC 6455 5.1)
                raise ValueError("masked frame from server")
            if end - pos < hdr + n:
                break
            payload = bytes(buf[pos + hdr:pos + hdr + n])
            pos += hdr + n
            opcode = b0 & 0x0F
            fin = b0 & 0x80
            if opcode >= 0x8:
                out.append((opcode, payload))
            elif opcode == OP_CONT:
                self._frag.append(payload)
                if fin:
                    out.append((self._frag_op, b"".join(self._frag)))
                    self._frag_op, self._frag = None, []
            elif fin:
                out.append((opcode, payload))
            else:
                self._frag_op, self._frag = opcode, [payload]
        if pos:
            del buf[:pos]
        return out


class MailboxClientProtocol(asyncio.Protocol):
    """One WebSocket connection to a Mailbox server, JSON messages in and out.

    `expect(pred)` returns a future for the next received message that
    satisfies `pred` (messages nobody waits for, such as `ack`, are dropped, as
    the Mailbox server protocol lets clients ignore them). Server `error`
    messages fail every waiter: the benchmark counts them as failures.
    """

    def __init__(self, host_header, path="/v1"):
        self._request = (
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: {}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).format(path, host_header, _KEY).encode("ascii")
        self._loop = asyncio.get_running_loop()
        self.transport = None
        self.opened = self._loop.create_future()
        self.closed = self._loop.create_future()
        self._hs_buf = b""
        self._upgraded = False
        self._parser = FrameParser()
        self._waiters = []  # [(predicate, future)]
        self._backlog = []  # messages received before anyone asked
        self._failure = None  # once set, every expect() fails with it
        self.errors = []

    # asyncio.Protocol

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Close with RST once the WebSocket closing handshake is done:
            # no TIME_WAIT left behind, so thousands of pairs per second do
            # not exhaust the loopback ephemeral ports.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.write(self._request)

    def data_received(self, data):
        if not self._upgraded:
            self._hs_buf += data
            idx = self._hs_buf.find(b"\r\n\r\n")
            if idx < 0:
                return
            head, data = self._hs_buf[:idx], self._hs_buf[idx + 4:]
            self._hs_buf = b""
            if not head.startswith(b"HTTP/1.1 101"):
                err = HandshakeFailed(head.split(b"\r\n", 1)[0])
                self.opened.set_exception(err)
                self.opened.exception()
                self._fail(err)
                self.transport.abort()
                return
            self._upgraded = True
            self.opened.set_result(None)
            if not data:
                return
        for opcode, payload in self._parser.feed(data):
            if opcode == OP_BINARY or opcode == OP_TEXT:
                self._deliver(json.loads(payload))
            elif opcode == OP_PING:
                self.transport.write(encode_frame(OP_PONG, payload))
            elif opcode == OP_CLOSE:
                if not self.closed.done():
                    self.closed.set_result(payload[:2])
                self.transport.abort()
                return

    def connection_lost(self, exc):
        err = ConnectionLostEarly(exc or "connection lost")
        for fut in (self.opened, self.closed):
            if not fut.done():
                fut.set_exception(err)
                fut.exception()  # mark retrieved: nobody may be waiting
        self._fail(err)

    # the bench's side

    def send(self, msg):
        self.transport.write(encode_frame(OP_BINARY, json.dumps(msg).encode()))

    def expect(self, pred):
        if self._failure is not None:
            fut = self._loop.create_future()
            fut.set_exception(self._failure)
            return fut
        for i, msg in enumerate(self._backlog):
            if pred(msg):
                del self._backlog[i]
                fut = self._loop.create_future()
                fut.set_result(msg)
                return fut
        fut = self._loop.create_future()
        self._waiters.append((pred, fut))
        return fut

    def expect_type(self, mtype):
        return self.expect(lambda m: m.get("type") == mtype)

    def close(self):
        """Start the closing handshake (code 1000); `closed` fires when done."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(encode_frame(OP_CLOSE, b"\x03\xe8"))
        return self.closed

    def abort(self):
        if self.transport is not None:
            self.transport.abort()

    def _deliver(self, msg):
        mtype = msg.get("type")
        if mtype == "ack":
            return
        if mtype == "error":
            self.errors.append(msg)
            self._fail(ServerError(msg.get("error")))
            return
        for i, (pred, fut) in enumerate(self._waiters):
            if pred(msg):
                del self._waiters[i]
                if not fut.done():
                    fut.set_result(msg)
                return
        self._backlog.append(msg)

    def _fail(self, exc):
        if self._failure is None:
            self._failure = exc
        waiters, self._waiters = self._waiters, []
        for _, fut in waiters:
            if not fut.done():
                fut.set_exception(exc)


class ServerError(Exception):
    """The server answered with an `error` message (Mailbox server
    protocol, "All Message Types")."""


async def connect(host, port, timeout):
    """Open a WebSocket to ws://host:port/v1; return the protocol when upgraded."""
    loop = asyncio.get_running_loop()
    _, proto = await asyncio.wait_for(
        loop.create_connection(
            lambda: MailboxClientProtocol("{}:{}".format(host, port)),
            host, port),
        timeout)
    await asyncio.wait_for(proto.opened, timeout)
    return proto
