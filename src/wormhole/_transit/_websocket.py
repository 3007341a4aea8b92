# -*- test-case-name: tests.transit.test_websocket -*-
"""Reaching a Transit relay over WebSocket (Transit protocol,
"WebSockets Transport").

The relay handshake, the Transit (or Dilation) handshake and the records
are the same byte stream as on TCP, carried inside binary WebSocket
messages whose boundaries mean nothing. So a WebSocket relay connection is
just another client endpoint: ``WebSocketClientEndpoint.connect(factory)``
opens the WebSocket (over TCP, TLS for ``wss://``, or Tor) and hands the
protocol ``factory`` builds a transport whose ``write`` sends binary
messages and whose ``dataReceived`` gets every piece of every binary frame
as it arrives (never a whole message held first). The connection machines
above do not know which transport they ride on.

Flow control is the TCP connection's: a producer registered with the
WebSocket transport is registered with the TCP transport under it, and
pausing it stops reading frames.

Our data frames are built here rather than by autobahn's ``sendMessage``:
a client must mask every byte it sends (RFC 6455 5.3) with a fresh random
key, and autobahn's pure-Python masker (the CLI turns its compiled "NVX"
one off to start faster) cost the sender ten times the CPU of the whole TCP
path. We use the compiled masker when it can be built and a big-integer XOR
otherwise (docs/performance.md, "Transit over WebSocket").
"""

import functools
import os
import struct

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint, wrapClientTLS
from twisted.internet.interfaces import IConsumer, IPushProducer, IStreamClientEndpoint, ITransport
from twisted.internet.ssl import optionsForClientTLS
from zope.interface import implementer

# RFC 6455 7.4.1
CLOSE_NORMAL = 1000
CLOSE_UNSUPPORTED_DATA = 1003
# we never send a message bigger than this: a relay may bound its messages
# (ours does), the boundaries mean nothing, and frames this small are built
# in heap buffers that get reused, where bigger ones cost fresh pages each
# time (docs/performance.md, "Transit over WebSocket")
MAX_SEND_MESSAGE = 64 * 1024
# seconds for the HTTP upgrade and the closing handshake
OPEN_TIMEOUT = 15.0
CLOSE_TIMEOUT = 5.0


def _xor_big_int(key, data):
    n = len(data)
    stream = (key * ((n >> 2) + 1))[:n]
    return (int.from_bytes(data, "little")
            ^ int.from_bytes(stream, "little")).to_bytes(n, "little")


def _mask_portable(frame, start, key):
    frame[start:] = _xor_big_int(key, bytes(frame[start:]))


@functools.cache
def _masker():
    """mask_in_place(frame, start, key): XOR frame[start:] with the key.

    autobahn's compiled masker (built by cffi once, on the first WebSocket
    relay connection) works in place on our buffer, so a frame costs one
    copy of its payload; without cffi or a compiler, a big-integer XOR."""
    try:
        import autobahn.nvx._xormasker  # noqa: F401 (builds _nvx_xormasker)
        from _nvx_xormasker import ffi, lib
    except Exception:
        return _mask_portable

    def mask_in_place(frame, start, key):
        key_buffer = ffi.new("uint8_t[4]", key)
        masker = ffi.gc(lib.nvx_xormask_new(key_buffer), lib.nvx_xormask_free)
        lib.nvx_xormask_set_impl(masker, 2)  # SSE2 where there is one
        data = ffi.from_buffer("uint8_t[]", frame)
        lib.nvx_xormask_process(masker, data + start, len(frame) - start)
    return mask_in_place


def binary_frame(payload):
    """One final, masked binary frame (RFC 6455 5.2), as bytes: one copy
    of the payload into our buffer, masked there, one copy out (Twisted
    transports take bytes only)."""
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", 0x82, 0x80 | n)
    elif n < 65536:
        header = struct.pack("!BBH", 0x82, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", 0x82, 0x80 | 127, n)
    key = os.urandom(4)
    frame = bytearray(header)
    frame += key
    start = len(frame)
    frame += payload
    _masker()(frame, start, key)
    return bytes(frame)


class WebSocketRefused(ConnectionError):
    """The relay closed the WebSocket before (or instead of) opening it."""


@implementer(ITransport, IConsumer, IPushProducer)
class _MessageTransport:
    """What the stream protocol sees as its transport."""

    def __init__(self, ws):
        self._ws = ws

    @property
    def disconnecting(self):
        return self._ws.state != self._ws.STATE_OPEN

    @property
    def bufferSize(self):
        return getattr(self._ws.transport, "bufferSize", 0)

    @bufferSize.setter
    def bufferSize(self, value):
        if hasattr(self._ws.transport, "bufferSize"):
            self._ws.transport.bufferSize = value

    def setTcpNoDelay(self, enabled):
        if hasattr(self._ws.transport, "setTcpNoDelay"):
            self._ws.transport.setTcpNoDelay(enabled)

    def write(self, data):
        if self._ws.state != self._ws.STATE_OPEN:
            return  # closing: what comes after our close frame is moot
        view = memoryview(data)
        for start in range(0, len(view), MAX_SEND_MESSAGE):
            self._ws.transport.write(binary_frame(view[start:start + MAX_SEND_MESSAGE]))

    def writeSequence(self, pieces):
        self.write(b"".join(pieces))

    def loseConnection(self):
        if self._ws.state == self._ws.STATE_OPEN:
            # reading may be paused: the relay's close frame must get in
            self._ws.transport.resumeProducing()
            self._ws.sendClose(CLOSE_NORMAL)

    def abortConnection(self):
        self._ws.transport.abortConnection()

    def getPeer(self):
        return self._ws.transport.getPeer()

    def getHost(self):
        return self._ws.transport.getHost()

    def registerProducer(self, producer, streaming):
        self._ws.transport.registerProducer(producer, streaming)

    def unregisterProducer(self):
        self._ws.transport.unregisterProducer()

    def pauseProducing(self):
        self._ws.transport.pauseProducing()

    def resumeProducing(self):
        self._ws.transport.resumeProducing()

    def stopProducing(self):
        self._ws.transport.stopProducing()


class _StreamClientProtocol(WebSocketClientProtocol):
    _stream = None

    def onOpen(self):
        self._stream = self.factory.stream_factory.buildProtocol(self.transport.getPeer())
        if self._stream is None:
            self.sendClose(CLOSE_NORMAL)
            return
        self._stream.makeConnection(_MessageTransport(self))
        self.factory.opened(self._stream)

    # autobahn's frame API: each piece goes on as it arrives, so a relay
    # sending one huge message cannot make us hold it whole

    def onMessageBegin(self, isBinary):
        super().onMessageBegin(isBinary)
        if not isBinary and self.state == self.STATE_OPEN:
            # Transit protocol, "WebSockets Transport": "All sent and received
            # messages MUST use the WebSockets binary scheme"
            self.sendCloseFrame(CLOSE_UNSUPPORTED_DATA, b"binary messages only")

    def onMessageFrameData(self, payload):
        if self.message_is_binary and self._stream is not None:
            self._stream.dataReceived(payload)

    def onMessageFrameEnd(self):
        self.frame_data = None

    def onMessageEnd(self):
        self.message_data = None

    def onClose(self, wasClean, code, reason):
        if self._stream is None:
            self.factory.refused(code, reason)

    def connectionLost(self, reason):
        super().connectionLost(reason)
        # autobahn may leave its closing-handshake timers armed
        for name in ("openHandshakeTimeoutCall", "closeHandshakeTimeoutCall",
                     "serverConnectionDropTimeoutCall", "autoPingPendingCall",
                     "autoPingTimeoutCall"):
            call = getattr(self, name, None)
            if call is not None:
                setattr(self, name, None)
                try:
                    call.cancel()  # txaio's batched calls have no active()
                except Exception:
                    pass  # already fired or cancelled
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.connectionLost(reason)
        else:
            self.factory.refused(None, reason.getErrorMessage())


class _StreamClientFactory(WebSocketClientFactory):
    protocol = _StreamClientProtocol

    def __init__(self, url, stream_factory, reactor):
        super().__init__(url, reactor=reactor)
        self.setProtocolOptions(openHandshakeTimeout=OPEN_TIMEOUT,
                                closeHandshakeTimeout=CLOSE_TIMEOUT)
        self.stream_factory = stream_factory
        self.result = defer.Deferred(self._cancel)
        self._connection = None  # the TCP connect Deferred, until it fires

    def _cancel(self, d):
        pending, self._connection = self._connection, None
        if pending is not None:
            pending.cancel()

    def buildProtocol(self, addr):
        proto = super().buildProtocol(addr)
        self._proto = proto
        return proto

    def opened(self, stream):
        if not self.result.called:
            self.result.callback(stream)

    def refused(self, code, reason):
        if not self.result.called:
            self.result.errback(WebSocketRefused(
                f"WebSocket to {self.url} was not opened: {reason or code}"))


@implementer(IStreamClientEndpoint)
class WebSocketClientEndpoint:
    """Connects a stream protocol through a WebSocket at ``url``.

    ``inner`` is the endpoint of the underlying connection (TCP, TLS or
    Tor); ``client_endpoint`` builds the usual one for a URL.
    """

    def __init__(self, reactor, url, inner):
        self._reactor = reactor
        self._url = url
        self._inner = inner

    def connect(self, protocol_factory):
        factory = _StreamClientFactory(self._url, protocol_factory, self._reactor)
        connecting = self._inner.connect(factory)
        factory._connection = connecting

        def connected(ws):
            factory._connection = None
            return ws

        def failed(f):
            factory._connection = None
            if not factory.result.called:
                factory.result.errback(f)
        connecting.addCallbacks(connected, failed)

        def cancelled_after_connect(f):
            # cancelled during the HTTP upgrade: drop the TCP connection
            proto = getattr(factory, "_proto", None)
            if f.check(defer.CancelledError) and proto is not None \
                    and proto.transport is not None:
                proto.transport.abortConnection()
            return f
        factory.result.addErrback(cancelled_after_connect)
        return factory.result


def client_endpoint(reactor, hint, via=None):
    """The endpoint for a websocket-v1 hint: over Tor or a proxy when given
    one (``via``: its ``stream_via``), else TCP (wrapped in TLS for
    ``wss://``)."""
    if via is not None:
        inner = via.stream_via(hint.hostname, hint.port, tls=hint.tls)
    else:
        inner = HostnameEndpoint(reactor, hint.hostname, hint.port)
        if hint.tls:
            inner = wrapClientTLS(optionsForClientTLS(hint.hostname), inner)
    return WebSocketClientEndpoint(reactor, hint.url, inner)
