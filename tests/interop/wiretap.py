"""A recording WebSocket proxy between a client and a mailbox server.

Clients connect to ``tap.url`` instead of the server's URL; every frame is
forwarded unchanged and recorded, decoded, as ``(connection_number,
direction, message_dict)`` with direction "c2s" or "s2c" (and the frame
mode, "text" or "binary", in ``frames``).  This is how the
interop tests observe what the reference client and server actually put
on the wire (Mailbox server protocol, "All Message Types") without touching either.
"""
import json

from autobahn.twisted.websocket import (
    WebSocketClientFactory,
    WebSocketClientProtocol,
    WebSocketServerFactory,
    WebSocketServerProtocol,
    connectWS,
)
from twisted.internet import defer

from .scripted_server import NO_TIMERS


class _Tracked:
    """Lets the tap wait for every connection it touched to be gone, so a
    test leaves no socket behind (trial's clean-reactor check)."""

    def connectionMade(self):
        self.lost = defer.Deferred()
        self.factory.tap._live.append(self)
        super().connectionMade()

    def connectionLost(self, reason):
        super().connectionLost(reason)
        self.factory.tap._live.remove(self)
        self.lost.callback(None)


def _forward(proto, payload, is_binary):
    # one side may already be closing while the other still delivers
    if proto.state == proto.STATE_OPEN:
        proto.sendMessage(payload, is_binary)


class _Upstream(_Tracked, WebSocketClientProtocol):

    def onOpen(self):
        self.factory.downstream.upstream_opened(self)

    def onMessage(self, payload, isBinary):
        self.factory.downstream.from_server(payload, isBinary)


    def onClose(self, wasClean, code, reason):
        self.factory.downstream.upstream_closed()


class _UpstreamFactory(WebSocketClientFactory):

    def clientConnectionFailed(self, connector, reason):
        # the server is not there (e.g. being restarted): hang up on the
        # client too, so that it reconnects later, as it would have
        # without the tap in between
        self.downstream.upstream_closed()


class _Downstream(_Tracked, WebSocketServerProtocol):

    def onConnect(self, request):
        tap = self.factory.tap
        self.number = tap.connections
        tap.connections += 1
        self._upstream = None
        self._pending = []
        self._closed = False
        f = _UpstreamFactory(tap.upstream_url)
        f.protocol = _Upstream
        f.setProtocolOptions(**NO_TIMERS)
        f.downstream = self
        f.tap = tap
        self._connector = connectWS(f)
        tap._connectors.append(self._connector)

    def upstream_opened(self, upstream):
        self._upstream = upstream
        for payload, is_binary in self._pending:
            _forward(upstream, payload, is_binary)
        self._pending = []
        if self._closed:
            upstream.sendClose()

    def onMessage(self, payload, isBinary):
        self.factory.tap.record(self.number, "c2s", payload, isBinary)
        if self._upstream is None:
            self._pending.append((payload, isBinary))
        else:
            _forward(self._upstream, payload, isBinary)

    def from_server(self, payload, is_binary):
        self.factory.tap.record(self.number, "s2c", payload, is_binary)
        _forward(self, payload, is_binary)

    def upstream_closed(self):
        if self.state == self.STATE_OPEN:
            self.sendClose()
        else:
            self.transport.abortConnection()

    def onClose(self, wasClean, code, reason):
        self._closed = True
        if self._upstream is not None:
            self._upstream.sendClose()
        else:
            # upstream never opened: stop trying
            connector = getattr(self, "_connector", None)
            if connector is not None:
                connector.disconnect()


class WireTap:
    """Start with ``WireTap.start(reactor, upstream_url)``; ``stop()``
    closes the listening port and every upstream connection."""

    def __init__(self, upstream_url):
        self.upstream_url = upstream_url
        self.log = []
        self.frames = []
        self.connections = 0
        self._connectors = []
        self._live = []
        self._port = None
        self.url = None

    @classmethod
    def start(cls, reactor, upstream_url):
        tap = cls(upstream_url)
        f = WebSocketServerFactory()
        f.protocol = _Downstream
        f.setProtocolOptions(**NO_TIMERS)
        f.tap = tap
        tap._port = reactor.listenTCP(0, f, interface="127.0.0.1")
        tap.url = "ws://127.0.0.1:%d/v1" % tap._port.getHost().port
        return tap

    def record(self, number, direction, payload, is_binary):
        self.frames.append((number, direction,
                            "binary" if is_binary else "text"))
        try:
            msg = json.loads(payload.decode("utf-8"))
        except ValueError:
            msg = {"undecodable": payload.hex()}
        self.log.append((number, direction, msg))

    def messages(self, direction=None, type=None, connection=None):
        return [m for (n, d, m) in self.log
                if (direction is None or d == direction)
                and (type is None or m.get("type") == type)
                and (connection is None or n == connection)]

    @defer.inlineCallbacks
    def stop(self):
        yield self._port.stopListening()
        for c in self._connectors:
            c.disconnect()
        for proto in list(self._live):
            waiting = proto.lost
            proto.transport.abortConnection()
            yield waiting
