"""The one retry the wormhole-william tests allow
(``_support.once_more_if_william_disagreed``): only after that peer's key
disagreement, said by any of the three implementations, and only once."""
import types

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s


def run(stderr=b""):
    return types.SimpleNamespace(stderr=stderr)


class OnceMore(unittest.TestCase):

    def exchanges(self, *outcomes):
        """An exchange that gives the next outcome's runs each time."""
        given = iter(outcomes)
        self.count = 0

        def exchange():
            self.count += 1
            return defer.succeed(next(given))
        return exchange

    def test_each_implementation_s_words(self):
        """wormhole-william's, ours and the reference's words for it, on
        either run, bring one more exchange, whose runs are the answer."""
        for words in (b"2026/11/28 02:39:58 decrypt message failed\n",
                      b"ERROR: The peer's message did not decrypt: the two sides ...\n",
                      b"ERROR:  Key confirmation failed. Either you or your ...\n"):
            second = (run(), run())
            for first in ((run(words), run()), (run(), run(words))):
                exchange = self.exchanges(first, second)
                got = self.successResultOf(s.once_more_if_william_disagreed(exchange))
                self.assertIs(got, second)
                self.assertEqual(self.count, 2)

    def test_other_failures_are_not_retried(self):
        """Any other end, a failure included, is the answer at once."""
        first = (run(b"ERROR: the sender gave up"), run(b"Receive file error: unexpected EOF"))
        exchange = self.exchanges(first)
        self.assertIs(self.successResultOf(s.once_more_if_william_disagreed(exchange)), first)
        self.assertEqual(self.count, 1)

    def test_only_once(self):
        """Two in a row: the second is the answer, and the test using it
        fails on it."""
        words = b"decrypt message failed"
        second = (run(words), run())
        exchange = self.exchanges((run(words), run()), second)
        self.assertIs(self.successResultOf(s.once_more_if_william_disagreed(exchange)), second)
        self.assertEqual(self.count, 2)

    def test_our_words_are_the_library_s(self):
        """Ours are the start of WrongPasswordError's text (the CLI's
        ERROR line), so the marker follows the library's wording."""
        from wormhole.errors import WrongPasswordError
        self.assertTrue(str(WrongPasswordError()).encode().startswith(s.KEY_DISAGREEMENT[1]))
