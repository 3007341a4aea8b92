"""The whole happy path over real loopback WebSockets."""

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole.server.testing import start_mailbox_server

from ._client import connect, happy_exchange


class HappyPath(unittest.TestCase):
    @inlineCallbacks
    def start(self, **kw):
        srv = yield start_mailbox_server(reactor, **kw)
        self.addCleanup(srv.stop)
        return srv

    @inlineCallbacks
    def test_exchange(self):
        """Two clients allocate/claim/open/add/release/close and each sees
        both messages; the server records happy usage for both objects."""
        srv = yield self.start()
        self.assertTrue(srv.url.startswith("ws://127.0.0.1:"))
        got = yield happy_exchange(reactor, srv.url)
        self.assertEqual(len(got), 4)
        for msg in got:
            self.assertIn("server_tx", msg)
            self.assertIn("server_rx", msg)
            self.assertEqual(msg["id"], "5")
        kinds = sorted((r["kind"], r["result"]) for r in srv.usage())
        self.assertEqual(kinds, [("mailbox", "happy"),
                                 ("nameplate", "happy")])

    @inlineCallbacks
    def test_ack_ping_pong(self):
        """Every command is acked with its id; ping gets pong with id and
        server_rx; welcome carries motd."""
        srv = yield self.start(motd="hi there")
        c = yield connect(reactor, srv.url)
        self.addCleanup(c.close)
        welcome = yield c.next("welcome")
        self.assertEqual(welcome["welcome"], {"motd": "hi there"})
        self.assertIn("server_tx", welcome)
        c.send(type="ping", ping=7, id="p1")
        ack = yield c.next("ack")
        self.assertEqual(ack["id"], "p1")
        pong = yield c.next("pong")
        self.assertEqual((pong["pong"], pong["id"]), (7, "p1"))
        self.assertIn("server_rx", pong)

    @inlineCallbacks
    def test_sqlite(self):
        """The happy path on an SQLite database on disk."""
        path = self.mktemp()
        srv = yield self.start(channel_db=path)
        got = yield happy_exchange(reactor, srv.url)
        self.assertEqual(len(got), 4)
