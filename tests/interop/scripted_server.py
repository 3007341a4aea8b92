"""A scripted stand-in for a mailbox server, to see how the reference
*client* reacts to server behaviour neither real server shows by default
(a ``permission-required`` welcome, a welcome ``error``, an ``error`` reply
followed by a closed connection).

It records every client message as ``(connection_number, dict)``, acks
every message that has an id (Mailbox server protocol, "WebSocket Transport"), and answers
nothing else unless told to.  Frames go out in text mode, which the
reference client requires (docs/interop.md, "Frames").
"""
import json
import time

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet import defer

# autobahn's handshake timers outlive an aborted connection in a shared
# batched timer, which trial reports as a dirty reactor; tests end every
# connection themselves, so they are not needed
NO_TIMERS = {"openHandshakeTimeout": 0, "closeHandshakeTimeout": 0}


class _Scripted(WebSocketServerProtocol):

    def connectionMade(self):
        super().connectionMade()
        srv = self.factory.server
        self.lost = defer.Deferred()
        self.number = srv.connections
        srv.connections += 1
        srv._live.append(self)

    def connectionLost(self, reason):
        super().connectionLost(reason)
        self.factory.server._live.remove(self)
        self.lost.callback(None)

    def onOpen(self):
        welcome = self.factory.server.welcome
        if welcome is not None:  # None: withhold it until send_welcome()
            self.send_msg(type="welcome", welcome=welcome)

    def send_msg(self, **msg):
        if self.state != self.STATE_OPEN:
            return  # after our own close, messages still in flight
        msg["server_tx"] = time.time()
        self.sendMessage(json.dumps(msg).encode("utf-8"), False)

    def onMessage(self, payload, isBinary):
        srv = self.factory.server
        msg = json.loads(payload.decode("utf-8"))
        srv.received.append((self.number, msg))
        if "id" in msg:
            self.send_msg(type="ack", id=msg["id"])
        if msg.get("type") == "bind" and srv.on_bind == "error-close":
            self.send_msg(type="error", error="permission denied", orig=msg)
            self.sendClose()
        srv._check()


class ScriptedServer:
    """``ScriptedServer.start(reactor, welcome, on_bind=None)``; ``url``,
    ``received``, ``wait_for(predicate)``, ``stop()``."""

    def __init__(self, welcome, on_bind):
        self.welcome = welcome
        self.on_bind = on_bind
        self.received = []
        self.connections = 0
        self._live = []
        self._waiters = []

    @classmethod
    def start(cls, reactor, welcome, on_bind=None):
        srv = cls(welcome, on_bind)
        f = WebSocketServerFactory()
        f.protocol = _Scripted
        f.setProtocolOptions(**NO_TIMERS)
        f.server = srv
        srv._port = reactor.listenTCP(0, f, interface="127.0.0.1")
        srv.url = "ws://127.0.0.1:%d/v1" % srv._port.getHost().port
        return srv

    def send_welcome(self, welcome):
        """Send a (withheld) welcome now, to every open connection; it is
        recorded in ``received`` as (n, {"type": "(sent welcome)"}) to order it
        against the client's messages."""
        for proto in self._live:
            self.received.append((proto.number, {"type": "(sent welcome)"}))
            proto.send_msg(type="welcome", welcome=welcome)

    def wait_for(self, predicate):
        """Fires once ``predicate(received)`` is true."""
        d = defer.Deferred()
        self._waiters.append((predicate, d))
        self._check()
        return d

    def _check(self):
        # fire after updating the list: a callback may add a new waiter
        ready = [(p, d) for (p, d) in self._waiters if p(self.received)]
        self._waiters = [w for w in self._waiters if w not in ready]
        for _, d in ready:
            d.callback(list(self.received))

    @defer.inlineCallbacks
    def stop(self):
        yield self._port.stopListening()
        for proto in list(self._live):
            waiting = proto.lost
            proto.transport.abortConnection()
            yield waiting
