"""A mailbox's backlog is delivered as fast as the reader reads it, never
counted against the send buffer (over real loopback connections), and
only the server's own unread answers are (docs/security.md, "Mailbox
server")."""

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from ._client import connect

BODY = "ab" * 50000  # 100 kB of hex per message


class Backlog(unittest.TestCase):
    timeout = 60

    @inlineCallbacks
    def bound(self, srv, side):
        c = yield connect(reactor, srv.url)
        self.addCleanup(c.close)
        yield c.next("welcome")
        c.send(type="bind", appid="app", side=side)
        return c

    @inlineCallbacks
    def test_backlog_bigger_than_send_buffer(self):
        """A mailbox holding ten times the send buffer (1 MB of messages,
        a 100 kB buffer) is opened by a second side, which gets every
        message in order and stays connected."""
        srv = yield start_mailbox_server(reactor, max_send_buffer=100000)
        self.addCleanup(srv.stop)
        a = yield self.bound(srv, "a")
        a.send(type="open", mailbox="mb")
        for i in range(10):
            a.send(type="add", phase=str(i), body=BODY, id=str(i))
            yield a.next("message", phase=str(i))
        b = yield self.bound(srv, "b")
        b.send(type="open", mailbox="mb")
        phases = []
        for _ in range(10):
            msg = yield b.next("message")
            phases.append(msg["phase"])
            self.assertEqual(msg["body"], BODY)
        self.assertEqual(phases, [str(i) for i in range(10)])
        b.send(type="ping", ping=7)
        pong = yield b.next("pong")
        self.assertEqual(pong["pong"], 7)
        self.assertIsNone(b.close_code)
