"""``./dev demo`` (misc/demo.py): the README's first command sends a file
and a text through our Mailbox server and Transit relay and says OK."""
import os
import sys

from twisted.internet import defer
from twisted.trial import unittest

from ._pty import spawn_in_pty

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "misc", "demo.py")


class Demo(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def test_demo(self):
        """The demo exits 0 after the file (same sha256, through the relay,
        with a progress bar and summary) and the text arrived. It runs in
        a terminal, as from the README: the receiver's bar is drawn there
        (none is drawn without a terminal)."""
        run = spawn_in_pty(self, [sys.executable, DEMO], "demo")
        yield run.ended
        out = run.stdout.decode()
        self.assertEqual(run.status, 0, run.describe())
        self.assertIn("demo: the file arrived, same sha256", out)
        self.assertIn("demo: the text arrived", out)
        self.assertIn("Sending (->relay:tcp:127.0.0.1:", out)
        self.assertRegex(out, r"100%\|█+\| 20\.0M/20\.0M")
        self.assertIn("demo: OK, the file and the text arrived", out)
