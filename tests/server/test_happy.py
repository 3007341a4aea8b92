"""The whole happy path over real loopback WebSockets."""

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

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
        me = c.proto.transport.getHost()
        self.assertEqual(welcome["welcome"], {"motd": "hi there", "your-address":
                                              {"ipv4": "127.0.0.1", "port": me.port}})
        self.assertIn("server_tx", welcome)
        c.send(type="ping", ping=7, id="p1")
        ack = yield c.next("ack")
        self.assertEqual(ack["id"], "p1")
        pong = yield c.next("pong")
        self.assertEqual((pong["pong"], pong["id"]), (7, "p1"))
        self.assertIn("server_rx", pong)

    @inlineCallbacks
    def test_permessage_deflate_offer(self):
        """A client offering permessage-deflate (as Go's wormhole-william
        does) completes the opening handshake and is served."""
        from autobahn.websocket.compress import PerMessageDeflateOffer
        srv = yield self.start()
        c = yield connect(reactor, srv.url,
                          perMessageCompressionOffers=[
                              PerMessageDeflateOffer()])
        self.addCleanup(c.close)
        yield c.next("welcome")
        c.send(type="ping", ping=1)
        yield c.next("pong")

    @inlineCallbacks
    def test_sqlite(self):
        """The happy path on an SQLite database on disk."""
        path = self.mktemp()
        srv = yield self.start(channel_db=path)
        got = yield happy_exchange(reactor, srv.url)
        self.assertEqual(len(got), 4)


class Timeouts(unittest.TestCase):
    """The timeouts over a real connection (the sweep runs on the reactor;
    nothing here asserts how long anything took)."""

    @inlineCallbacks
    def test_bind_timeout(self):
        """A client that never binds gets an error and a 1008 close."""
        srv = yield start_mailbox_server(reactor, bind_timeout=0.5)
        self.addCleanup(srv.stop)
        c = yield connect(reactor, srv.url)
        err = yield c.next("error")
        self.assertIn("no bind within", err["error"])
        code, _ = yield c.when_closed()
        self.assertEqual(code, 1008)

    @inlineCallbacks
    def test_idle_timeout(self):
        """A bound client that goes quiet gets an error and a 1000 close;
        the server forgets the connection."""
        srv = yield start_mailbox_server(reactor, idle_timeout=0.5)
        self.addCleanup(srv.stop)
        c = yield connect(reactor, srv.url)
        c.send(type="bind", appid="a", side="s")
        err = yield c.next("error")
        self.assertIn("closing idle connection", err["error"])
        code, _ = yield c.when_closed()
        self.assertEqual(code, 1000)
        self.assertEqual(srv.mailbox.connections, set())


class Restart(unittest.TestCase):
    @inlineCallbacks
    def test_same_port_and_db(self):
        """stop() and start_mailbox_server(port=old, channel_db=same) bring
        the server back at the same URL with the mailbox's messages."""
        db = self.mktemp()
        srv = yield start_mailbox_server(reactor, channel_db=db)
        a = yield connect(reactor, srv.url)
        a.send(type="bind", appid="app", side="aaaa")
        a.send(type="claim", nameplate="3")
        mailbox = (yield a.next("claimed"))["mailbox"]
        a.send(type="open", mailbox=mailbox)
        a.send(type="add", phase="pake", body="abcd", id="x")
        yield a.next("message")
        yield srv.stop()
        yield a.when_closed()
        srv2 = yield start_mailbox_server(reactor, channel_db=db,
                                          port=srv.port)
        self.addCleanup(srv2.stop)
        self.assertEqual(srv2.url, srv.url)
        b = yield connect(reactor, srv2.url)
        self.addCleanup(b.close)
        b.send(type="bind", appid="app", side="bbbb")
        b.send(type="claim", nameplate="3")
        self.assertEqual((yield b.next("claimed"))["mailbox"], mailbox)
        b.send(type="open", mailbox=mailbox)
        msg = yield b.next("message")
        self.assertEqual((msg["side"], msg["phase"], msg["body"]),
                         ("aaaa", "pake", "abcd"))
