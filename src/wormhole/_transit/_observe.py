# -*- test-case-name: tests.transit.test_punch_loopback -*-
"""The second observation of our outside address (``_punch``): one short
WebSocket connection to the Mailbox server from a fresh local port, which
reads the ``welcome`` (it comes before anything is sent: Mailbox server
protocol, "Connection-Specific (Client-to-Server) Messages") and closes
without binding; the answer comes once the connection is gone."""

import json

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet.defer import Deferred

from .._ws import parse_relay_url, server_endpoint

# a welcome is small; a server that sends more is not answered further
_MAX_WELCOME = 64 * 1024


class _Observer(WebSocketClientProtocol):
    _seen = (None, None)

    def onMessage(self, payload, isBinary):
        try:
            msg = json.loads(payload.decode("utf-8"))
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("type") == "welcome":
            self._seen = (self.transport.getHost().port, msg.get("welcome"))
        self.sendClose()

    def onClose(self, wasClean, code, reason):
        self.factory.seen(*self._seen)


class _Factory(WebSocketClientFactory):
    protocol = _Observer

    def __init__(self, url, done):
        super().__init__(url)
        self.setProtocolOptions(maxMessagePayloadSize=_MAX_WELCOME,
                                maxFramePayloadSize=_MAX_WELCOME)
        self._done = done

    def seen(self, local_port, welcome):
        done, self._done = self._done, None
        if done is None or done.called:  # already seen, or cancelled
            return
        if local_port is None:
            done.errback(ConnectionError("the Mailbox server closed before "
                                         "its welcome"))
        else:
            done.callback((local_port, welcome))


def observe_welcome(reactor, url):
    """Deferred ``(local_port, welcome)`` of a second connection to the
    Mailbox server at ``url``; cancelling it drops the connection."""
    ep = server_endpoint(reactor, *parse_relay_url(url))
    protos = []

    def cancel(d):
        for p in protos:
            p.transport.abortConnection()
        connecting.cancel()
    done = Deferred(cancel)
    connecting = ep.connect(_Factory(url, done))

    def failed(f):
        if not done.called:
            done.errback(f)
    connecting.addCallbacks(protos.append, failed)
    return done
