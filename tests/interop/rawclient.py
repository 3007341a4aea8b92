"""A raw mailbox-protocol client for differential server tests.

It sends exactly the messages a test scripts (valid or not), and uses the
protocol's own ``ping``/``pong`` (Mailbox server protocol, "Connection-Specific
(Client-to-Server) Messages": "only used by unit tests for
synchronization purposes") to know when the server has answered everything
sent so far, so no test waits on a clock.
"""
import json

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol, connectWS
from twisted.internet import defer

from .scripted_server import NO_TIMERS


class _Raw(WebSocketClientProtocol):

    def onOpen(self):
        self.received = []
        self.closed = False
        self._waiters = []
        self._ping = 1000
        self.factory.opened.callback(self)

    def onMessage(self, payload, isBinary):
        self.received.append(json.loads(payload.decode("utf-8")))
        self._check()

    def onClose(self, wasClean, code, reason):
        self.closed = True
        if not self.factory.opened.called:
            self.factory.opened.errback(ConnectionError(reason))
            return
        self._check()

    def send(self, msg):
        """Send a dict as JSON (or a str/bytes as is) in a text frame."""
        if isinstance(msg, dict):
            msg = json.dumps(msg)
        if isinstance(msg, str):
            msg = msg.encode("utf-8")
        if self.state == self.STATE_OPEN:
            self.sendMessage(msg, False)

    def sync(self):
        """Fires with everything received so far (and clears it) once the
        server has answered a ping sent now, or closed the connection."""
        self._ping += 1
        n = self._ping
        self.send({"type": "ping", "ping": n})
        d = defer.Deferred()
        self._waiters.append((n, d))
        self._check()
        return d

    def _check(self):
        ready = []
        for n, d in self._waiters:
            if self.closed or any(m.get("type") == "pong" and m.get("pong") == n
                                  for m in self.received):
                ready.append((n, d))
        self._waiters = [w for w in self._waiters if w not in ready]
        for n, d in ready:
            got = [m for m in self.received
                   if not (m.get("type") == "pong" and m.get("pong") == n)]
            if self.closed:
                got.append({"type": "(connection closed)"})
            self.received = []
            d.callback(got)

    def close(self):
        if self.closed:
            return defer.succeed(None)
        d = defer.Deferred()
        self._waiters.append((None, d))
        self.transport.abortConnection()
        return d


def connect(reactor, url, headers=None):
    """Fires with a connected _Raw (``headers``: extra HTTP headers of the
    opening handshake)."""
    f = WebSocketClientFactory(url, headers=headers)
    f.protocol = _Raw
    f.setProtocolOptions(**NO_TIMERS)
    f.opened = defer.Deferred()
    connectWS(f)
    return f.opened
