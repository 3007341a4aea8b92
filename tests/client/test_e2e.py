"""End to end: two clients in one reactor over loopback with our Mailbox
server (``wormhole_mailbox.testing``). Nothing here waits on time: every
step waits for an event, and every test leaves the reactor clean."""

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater
from twisted.trial import unittest

import wormhole
from wormhole import errors
from wormhole_mailbox.testing import start_mailbox_server

APPID = "example.com/e2e"


class Delegate:
    def __init__(self):
        self.messages = []
        self.closed = defer.Deferred()
        self.code = defer.Deferred()
        self.verifier = None
        self._waiting = []

    def wormhole_got_welcome(self, welcome):
        pass

    def wormhole_got_code(self, code):
        self.code.callback(code)

    def wormhole_got_unverified_key(self, key):
        pass

    def wormhole_got_verifier(self, verifier):
        self.verifier = verifier

    def wormhole_got_versions(self, versions):
        pass

    def wormhole_got_message(self, msg):
        self.messages.append(msg)
        if self._waiting:
            self._waiting.pop(0).callback(msg)

    def next_message(self):
        d = defer.Deferred()
        self._waiting.append(d)
        return d

    def wormhole_closed(self, result):
        self.closed.callback(result)


class E2E(unittest.TestCase):
    @defer.inlineCallbacks
    def setUp(self):
        self.db = self.mktemp()
        self.srv = yield start_mailbox_server(reactor, channel_db=self.db)
        self.addCleanup(self._stop_server)

    @defer.inlineCallbacks
    def _stop_server(self):
        if self.srv is not None:
            yield self.srv.stop()
        # let the client sockets finish closing before trial checks
        yield deferLater(reactor, 0, lambda: None)

    def create(self, **kwargs):
        return wormhole.create(APPID, self.srv.url, reactor, _reconnect_delay=0.05,
                               _reconnect_max_delay=0.2, **kwargs)

    @defer.inlineCallbacks
    def wait_for_usage(self, count):
        # the server writes the usage record when the last side has closed,
        # before it answers `closed`, so once both closes fire it is there
        yield deferLater(reactor, 0, lambda: None)
        self.assertEqual(len(self.srv.usage()), count, self.srv.usage())

    @defer.inlineCallbacks
    def test_text_both_directions(self):
        """Deferred mode: allocate/set_code, a message each way, same
        verifier, both close happy, server records a happy mailbox."""
        w1 = self.create(versions={"one": 1})
        w2 = self.create(versions={"two": 2})
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        w1.send_message(b"hello")
        w2.send_message(b"world")
        self.assertEqual((yield w2.get_message()), b"hello")
        self.assertEqual((yield w1.get_message()), b"world")
        self.assertEqual((yield w1.get_verifier()), (yield w2.get_verifier()))
        self.assertEqual((yield w1.get_versions()), {"two": 2})
        self.assertEqual((yield w1.close()), "happy")
        self.assertEqual((yield w2.close()), "happy")
        yield self.wait_for_usage(2)
        moods = [u.get("result") for u in self.srv.usage() if u.get("kind") == "mailbox"]
        self.assertEqual(moods, ["happy"])

    @defer.inlineCallbacks
    def test_delegated(self):
        """Delegated mode exchanges text both ways and reports closed."""
        dg1, dg2 = Delegate(), Delegate()
        w1 = self.create(delegate=dg1)
        w2 = self.create(delegate=dg2)
        w1.allocate_code()
        code = yield dg1.code
        w2.set_code(code)
        d1, d2 = dg1.next_message(), dg2.next_message()
        w1.send_message(b"to two")
        w2.send_message(b"to one")
        self.assertEqual((yield d2), b"to two")
        self.assertEqual((yield d1), b"to one")
        self.assertEqual(dg1.verifier, dg2.verifier)
        w1.close()
        w2.close()
        self.assertEqual((yield dg1.closed), "happy")
        self.assertEqual((yield dg2.closed), "happy")

    @defer.inlineCallbacks
    def test_wrong_code(self):
        """Different codes: WrongPasswordError on both sides, and the server
        records the mailbox as scary."""
        w1, w2 = self.create(), self.create()
        w1.set_code("17-abc-def")
        w2.set_code("17-abc-deg")
        d1, d2 = w1.get_message(), w2.get_verifier()
        yield self.assertFailure(d1, errors.WrongPasswordError)
        yield self.assertFailure(d2, errors.WrongPasswordError)
        yield self.assertFailure(w1.close(), errors.WrongPasswordError)
        yield self.assertFailure(w2.close(), errors.WrongPasswordError)
        yield self.wait_for_usage(2)
        moods = [u.get("result") for u in self.srv.usage() if u.get("kind") == "mailbox"]
        self.assertEqual(moods, ["scary"])

    @defer.inlineCallbacks
    def test_lonely(self):
        """A peer that never comes: close() errbacks with LonelyError and
        the server records lonely."""
        w = self.create()
        w.set_code("18-abc-def")
        yield w.get_welcome()
        yield self.assertFailure(w.close(), errors.LonelyError)
        # we may close before the claim is answered, so before the mailbox
        # is opened: then only the nameplate has a record
        yield deferLater(reactor, 0, lambda: None)
        moods = [u.get("result") for u in self.srv.usage()]
        self.assertTrue(moods)
        self.assertEqual(set(moods), {"lonely"})

    @defer.inlineCallbacks
    def test_ten_messages_each_way(self):
        """Ten send_message/get_message each way, in order."""
        w1, w2 = self.create(), self.create()
        w1.set_code("19-abc-def")
        w2.set_code("19-abc-def")
        for i in range(10):
            w1.send_message(b"a%d" % i)
            w2.send_message(b"b%d" % i)
        got1, got2 = [], []
        for _ in range(10):
            got1.append((yield w1.get_message()))
            got2.append((yield w2.get_message()))
        self.assertEqual(got1, [b"b%d" % i for i in range(10)])
        self.assertEqual(got2, [b"a%d" % i for i in range(10)])
        yield w1.close()
        yield w2.close()

    @defer.inlineCallbacks
    def test_server_restart(self):
        """The server stops and restarts on the same port and database
        mid-exchange; both clients reconnect and finish."""
        w1, w2 = self.create(), self.create()
        w1.set_code("20-abc-def")
        w2.set_code("20-abc-def")
        w1.send_message(b"before")
        self.assertEqual((yield w2.get_message()), b"before")
        port = self.srv.port
        yield self.srv.stop()
        self.srv = None
        w1.send_message(b"during")
        w2.send_message(b"reply")
        self.srv = yield start_mailbox_server(reactor, channel_db=self.db, port=port)
        self.assertEqual((yield w2.get_message()), b"during")
        self.assertEqual((yield w1.get_message()), b"reply")
        w1.send_message(b"after")
        self.assertEqual((yield w2.get_message()), b"after")
        self.assertEqual((yield w1.close()), "happy")
        self.assertEqual((yield w2.close()), "happy")

    @defer.inlineCallbacks
    def test_input_code(self):
        """The input helper, against the real server's nameplate list."""
        w1, w2 = self.create(), self.create()
        w1.allocate_code()
        code = yield w1.get_code()
        nameplate, words = code.split("-", 1)
        h = w2.input_code()
        h.choose_nameplate(nameplate)
        yield h.when_wordlist_is_available()
        h.choose_words(words)
        self.assertEqual((yield w2.get_code()), code)
        yield w2.get_verifier()
        yield w1.close()
        yield w2.close()

    @defer.inlineCallbacks
    def test_crowded(self):
        """A third client on the same nameplate gets ServerError (crowded),
        and every close() still finishes."""
        ws = [self.create() for i in range(3)]
        for w in ws:
            w.set_code("21-abc-def")
        results = yield defer.DeferredList([w.get_verifier() for w in ws],
                                           consumeErrors=True)
        errors_seen = [r.value for ok, r in results if not ok]
        self.assertTrue(errors_seen)
        self.assertTrue(all(isinstance(e, errors.ServerError) for e in errors_seen))
        self.assertIn("crowded", str(errors_seen[0]))
        closes = yield defer.DeferredList([w.close() for w in ws], consumeErrors=True)
        self.assertEqual(len(closes), 3)

    @defer.inlineCallbacks
    def test_close_while_server_down(self):
        """close() while the server is down finishes once it is back (the
        release and close are sent after reconnecting)."""
        w1, w2 = self.create(), self.create()
        w1.set_code("22-abc-def")
        w2.set_code("22-abc-def")
        yield w1.get_verifier()
        yield w2.get_verifier()
        port = self.srv.port
        yield self.srv.stop()
        self.srv = None
        d1, d2 = w1.close(), w2.close()
        self.srv = yield start_mailbox_server(reactor, channel_db=self.db, port=port)
        self.assertEqual((yield d1), "happy")
        self.assertEqual((yield d2), "happy")
