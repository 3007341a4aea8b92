"""A small WebSocket client for the server tests: send dicts, await
messages by type (over real loopback connections)."""

import json

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol, connectWS
from twisted.internet.defer import Deferred, inlineCallbacks, returnValue


class _Proto(WebSocketClientProtocol):
    def onOpen(self):
        self.factory.client._opened(self)

    def onMessage(self, payload, isBinary):
        self.factory.client._got(json.loads(payload.decode("utf-8")))

    def onClose(self, wasClean, code, reason):
        self.factory.client._closed(code, reason)


class Client:
    def __init__(self):
        self.received = []
        self._waiters = []
        self._open_d = Deferred()
        self._close_d = Deferred()
        self.close_code = None
        self.close_reason = None
        self.proto = None

    def _opened(self, proto):
        self.proto = proto
        self._open_d.callback(self)

    def _got(self, msg):
        self.received.append(msg)
        self._check()

    def _closed(self, code, reason):
        self.close_code, self.close_reason = code, reason
        if not self._open_d.called:
            self._open_d.errback(ConnectionError(f"closed {code} {reason}"))
        self._close_d.callback((code, reason))
        for _pred, d in self._waiters:
            d.errback(ConnectionError(f"closed {code} {reason} while "
                                      "waiting"))
        self._waiters = []

    def _check(self):
        for pred, d in list(self._waiters):
            for i, msg in enumerate(self.received):
                if pred(msg):
                    del self.received[i]
                    self._waiters.remove((pred, d))
                    d.callback(msg)
                    break

    def send(self, **msg):
        self.proto.sendMessage(json.dumps(msg).encode("utf-8"), True)

    def send_raw(self, payload, binary=True):
        self.proto.sendMessage(payload, binary)

    def next(self, mtype, **match):
        """The next message of ``mtype`` (and matching keys), consumed."""
        def pred(msg):
            return msg.get("type") == mtype and all(
                msg.get(k) == v for k, v in match.items())
        d = Deferred()
        self._waiters.append((pred, d))
        if self._close_d.called:
            self._waiters.remove((pred, d))
            d.errback(ConnectionError("already closed"))
            return d
        self._check()
        return d

    def when_closed(self):
        d = Deferred()
        self._close_d.addBoth(lambda r: (d.callback(r), r)[1])
        return d

    def close(self):
        if self.proto is not None and not self._close_d.called:
            self.proto.sendClose(1000)
            return self.when_closed()
        from twisted.internet.defer import succeed
        return succeed(None)


@inlineCallbacks
def connect(reactor, url, **options):
    """A connected Client; ``options`` are autobahn client options."""
    client = Client()
    factory = WebSocketClientFactory(url, reactor=reactor)
    if options:
        factory.setProtocolOptions(**options)
    factory.protocol = _Proto
    factory.client = client
    connectWS(factory)
    yield client._open_d
    returnValue(client)


@inlineCallbacks
def happy_exchange(reactor, url, appid="test/app"):
    """Two clients: allocate, claim, open, add (each sees both), release,
    close; returns the two clients' `message` lists. Proves the server is
    still serving."""
    a = yield connect(reactor, url)
    b = yield connect(reactor, url)
    try:
        yield a.next("welcome")
        yield b.next("welcome")
        a.send(type="bind", appid=appid, side="aaaa", id="1")
        b.send(type="bind", appid=appid, side="bbbb", id="1")
        a.send(type="allocate", id="2")
        nameplate = (yield a.next("allocated"))["nameplate"]
        a.send(type="claim", nameplate=nameplate, id="3")
        mailbox = (yield a.next("claimed"))["mailbox"]
        b.send(type="claim", nameplate=nameplate, id="3")
        mailbox_b = (yield b.next("claimed"))["mailbox"]
        assert mailbox == mailbox_b, (mailbox, mailbox_b)
        a.send(type="open", mailbox=mailbox, id="4")
        b.send(type="open", mailbox=mailbox, id="4")
        a.send(type="add", phase="pake", body="aa", id="5")
        b.send(type="add", phase="pake", body="bb", id="5")
        got = []
        for c in (a, b):
            for side in ("aaaa", "bbbb"):
                got.append((yield c.next("message", side=side)))
        for c in (a, b):
            c.send(type="release", id="6")
            yield c.next("released")
            c.send(type="close", mood="happy", id="7")
            yield c.next("closed")
        returnValue(got)
    finally:
        yield a.close()
        yield b.close()
