"""Code entry after the wormhole closed (docs/api.md "After close"): the
helper refuses with WormholeClosed carrying why, never a NoTransition
from a machine that has moved on; a pending word-list wait fails."""

import io

from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import errors

from ...client.fakes import FakeServer

APPID = "example.com/test"
URL = "ws://127.0.0.1:1/v1"


class AfterCloseTests(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = FakeServer(self.clock)

    def create(self, **kwargs):
        return wormhole.create(APPID, URL, self.clock, stderr=io.StringIO(),
                               _endpoint_factory=self.server.endpoint_factory, **kwargs)

    def close_lonely(self, w):
        d = w.close()
        self.server.pump()
        self.failureResultOf(d, errors.LonelyError)

    def refused(self, call, *args):
        e = self.assertRaises(errors.WormholeClosed, call, *args)
        self.assertNotIsInstance(e, errors.InternalError)
        return e.reason

    def test_no_server_then_code_typed(self):
        """The Mailbox refuses the connection while the human types: the
        code typed afterwards (the CLI's `receive` with no network) is
        refused with the ServerConnectionError as the reason. It was a
        NoTransition for Nameplate.set_nameplate in Nameplate.S5A."""
        self.server.up = False
        w = self.create()
        h = w.input_code()
        self.server.pump()  # the connection is refused: the wormhole closes
        closed = w.close()
        self.server.pump()
        self.failureResultOf(closed, errors.ServerConnectionError)
        for call, args in ((h.choose_nameplate, ("4",)), (h.refresh_nameplates, ()),
                           (h.get_nameplate_completions, ("",)),
                           (h.get_word_completions, ("ab",)), (h.choose_words, ("abc-def",))):
            reason = self.refused(call, *args)
            self.assertIsInstance(reason, errors.ServerConnectionError)
            self.assertIn(URL, str(reason))

    def test_code_typed_after_close(self):
        """On a healthy server, a nameplate chosen after close() is refused
        (it was a NoTransition for Nameplate.set_nameplate in Nameplate.S5B);
        the reason is what close() ended with."""
        w = self.create()
        h = w.input_code()
        self.server.pump()
        d = w.close()
        self.server.pump()
        self.failureResultOf(d, errors.LonelyError)
        self.assertIsInstance(self.refused(h.choose_nameplate, "4"), errors.LonelyError)

    def test_words_after_close(self):
        """Nameplate chosen, then close(), then the words: refused, and
        nothing more reaches the server."""
        w = self.create()
        h = w.input_code()
        self.server.pump()
        h.choose_nameplate("4")
        self.server.pump()
        self.close_lonely(w)
        sent = len(self.server.received)
        self.refused(h.choose_words, "purple-sausages")
        self.server.pump()
        self.assertEqual(len(self.server.received), sent)
        d = w.get_code()
        self.server.pump()
        self.failureResultOf(d, errors.LonelyError)

    def test_wordlist_wait_fails_on_close(self):
        """when_wordlist_is_available() asked before a close fails with
        WormholeClosed at the close (it never fired before); asked after,
        it fails at once."""
        w = self.create()
        h = w.input_code()
        self.server.pump()
        before = h.when_wordlist_is_available()
        self.close_lonely(w)
        self.failureResultOf(before, errors.WormholeClosed)
        after = h.when_wordlist_is_available()
        self.server.pump()
        f = self.failureResultOf(after, errors.WormholeClosed)
        self.assertIsInstance(f.value.reason, errors.LonelyError)

    def test_wordlist_known_before_close(self):
        """A word list that arrived before the close stays available."""
        w = self.create()
        h = w.input_code()
        self.server.pump()
        h.choose_nameplate("4")
        self.close_lonely(w)
        d = h.when_wordlist_is_available()
        self.server.pump()
        self.assertIsNone(self.successResultOf(d))

    def test_refresh_after_close(self):
        """refresh_nameplates() after close() is refused (it was an
        AttributeError from RendezvousConnector._tx: the connection was gone)."""
        w = self.create()
        h = w.input_code()
        self.server.pump()
        self.close_lonely(w)
        self.refused(h.refresh_nameplates)

    def test_set_code_after_close_says_why(self):
        """set_code() after a failure: WormholeClosedError (an
        OnlyOneCodeError, as the reference raises) and a WormholeClosed
        whose reason is the failure, named in its text."""
        self.server.up = False
        w = self.create()
        self.server.pump()
        e = self.assertRaises(errors.WormholeClosed, w.set_code, "4-purple-sausages")
        self.assertIsInstance(e, errors.OnlyOneCodeError)
        self.assertIsInstance(e.reason, errors.ServerConnectionError)
        self.assertIn(URL, str(e))
        closed = w.close()
        self.server.pump()
        self.failureResultOf(closed, errors.ServerConnectionError)

    def test_delegated(self):
        """Delegated mode: the same refusal."""
        from ._support import Delegate
        self.server.up = False
        dg = Delegate()
        w = self.create(delegate=dg)
        h = w.input_code()
        self.server.pump()
        self.assertIsInstance(self.refused(h.choose_nameplate, "4"),
                              errors.ServerConnectionError)
        self.assertEqual(dg.events[-1][0], "closed")
