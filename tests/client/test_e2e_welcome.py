"""End to end with our server: the welcome message and permissions
(Mailbox server protocol, "Permission to Use the Server"; Client API,
"Welcome Messages")."""

import io

from twisted.internet import defer, reactor
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import deferLater
from twisted.trial import unittest

import wormhole
from wormhole import errors
from wormhole_mailbox.testing import start_mailbox_server

APPID = "example.com/e2e-welcome"


class WelcomeE2E(unittest.TestCase):
    @defer.inlineCallbacks
    def start(self, **kwargs):
        srv = yield start_mailbox_server(reactor, **kwargs)
        self.addCleanup(self._stop, srv)
        return srv

    @defer.inlineCallbacks
    def _stop(self, srv):
        yield srv.stop()
        yield deferLater(reactor, 0, lambda: None)

    @defer.inlineCallbacks
    def exchange(self, srv):
        w1 = wormhole.create(APPID, srv.url, reactor)
        w2 = wormhole.create(APPID, srv.url, reactor)
        w1.set_code("41-purple-sausages")
        w2.set_code("41-purple-sausages")
        w1.send_message(b"ping")
        self.assertEqual((yield w2.get_message()), b"ping")
        yield w1.close()
        yield w2.close()

    @defer.inlineCallbacks
    def test_hashcash_required(self):
        """A server that only accepts hashcash: we mint a stamp, submit it
        before bind, and the exchange works."""
        srv = yield self.start(permissions="hashcash:8")
        yield self.exchange(srv)

    @defer.inlineCallbacks
    def test_none_or_hashcash(self):
        """none+hashcash: we pick none and the exchange works."""
        srv = yield self.start(permissions="none+hashcash:30")
        yield self.exchange(srv)

    @defer.inlineCallbacks
    def test_motd(self):
        """The motd is printed to stderr, naming the server."""
        srv = yield self.start(motd="be nice")
        err = io.StringIO()
        w = wormhole.create(APPID, srv.url, reactor, stderr=err)
        welcome = yield w.get_welcome()
        self.assertEqual(welcome.get("motd"), "be nice")
        self.assertIn(srv.url, err.getvalue())
        self.assertIn("be nice", err.getvalue())
        yield self.assertFailure(w.close(), errors.LonelyError)

    @defer.inlineCallbacks
    def test_welcome_error(self):
        """A server that signals an error: WelcomeError everywhere."""
        srv = yield self.start(signal_error="down for maintenance")
        w = wormhole.create(APPID, srv.url, reactor)
        w.set_code("42-purple-sausages")
        e = yield self.assertFailure(w.get_verifier(), errors.WelcomeError)
        self.assertEqual(str(e), "down for maintenance")
        yield self.assertFailure(w.close(), errors.WelcomeError)

    @defer.inlineCallbacks
    def test_no_server(self):
        """Nothing listening: ServerConnectionError naming the URL, whose
        ``reason`` is the exception itself (as in the reference 0.24)."""
        srv = yield self.start()
        url = srv.url
        yield srv.stop()
        w = wormhole.create(APPID, url, reactor)
        e = yield self.assertFailure(w.get_welcome(), errors.ServerConnectionError)
        self.assertIn(url, str(e))
        self.assertIsInstance(e.reason, ConnectionRefusedError)
        yield self.assertFailure(w.close(), errors.ServerConnectionError)
