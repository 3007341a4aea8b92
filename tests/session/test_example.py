"""misc/session-example.py runs as documented (docs/api.md "Sessions"):
both sides in one process on our own servers, the file arrives, then a
share both ways, exit 0."""
import os
import sys

from twisted.internet import reactor, utils
from twisted.trial import unittest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "misc", "session-example.py")


class Example(unittest.TestCase):
    timeout = 60

    def test_runs(self):
        d = utils.getProcessOutputAndValue(sys.executable, [EXAMPLE], env=dict(os.environ),
                                           reactor=reactor)

        def check(result):
            out, err, code = result
            self.assertEqual(code, 0, err.decode(errors="replace"))
            text = out.decode()
            self.assertIn("receive: Received(name='hello.bin'", text)
            self.assertIn("the file arrived whole", text)
            self.assertIn("share left: Received(name='from-right.txt'", text)
            self.assertIn("share right: Received(name='from-left.txt'", text)
            self.assertIn("both shared files arrived", text)
        return d.addCallback(check)
