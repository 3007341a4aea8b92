"""``wormhole receive`` with no Mailbox server to reach (docs/cli.md,
"Messages"): nothing listens at ``--relay-url``. The code typed at the
question, or piped on stdin, ends in one ERROR line naming the server
and exit 1 -- before, it was a NoTransition traceback of the Nameplate
machine -- within 10 s, and the terminal is left as it was found."""
import os
import re
import sys
import termios

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .._processes import free_port
from ._pty import open_terminal, spawn_in_pty

# the acceptance's bound: a user with no network learns it at once
DEADLINE = 10


def closed_port_url():
    """A ws:// URL on 127.0.0.1 where nothing listens (a port just freed)."""
    return f"ws://127.0.0.1:{free_port()}/v1"


class NoMailbox(unittest.TestCase):
    timeout = 60

    def in_terminal(self, argv):
        """``argv`` in a new pseudo-terminal; the terminal's settings
        before it started, and our own copy of its master (the transport
        closes its own at the end)."""
        terminal = open_terminal()
        before = termios.tcgetattr(terminal[0])
        master = os.dup(terminal[0])
        self.addCleanup(os.close, master)
        run = spawn_in_pty(self, argv, "receiver", terminal=terminal)
        return run, before, master

    @defer.inlineCallbacks
    def ended(self, run):
        """The exit status, failing the test if it takes over DEADLINE seconds."""
        status = yield run.ended.addTimeout(DEADLINE, reactor)
        return status

    def check_one_error(self, run, url, status):
        out = (run.stdout + run.stderr).decode("utf-8", "replace")
        self.assertEqual(status, 1, out)
        self.assertNotIn("Traceback", out)
        self.assertNotIn("NoTransition", out)
        errors = [line for line in re.split(r"[\r\n]+", out) if "ERROR" in line]
        self.assertEqual(len(errors), 1, out)
        self.assertTrue(errors[0].lstrip().startswith("ERROR: cannot connect to the mailbox "
                                                      f"server at {url}"), out)

    @defer.inlineCallbacks
    def test_code_typed_at_the_question(self):
        url = closed_port_url()
        run, before, master = self.in_terminal(
            [sys.executable, "-m", "wormhole.cli", "--relay-url", url, "receive"])
        # typed ahead: the terminal holds it until readline reads it, if
        # the refused connection has not ended the question before
        # (either way the same one line must come)
        run.write(b"4-purple-sausages\r")
        status = yield self.ended(run)
        self.check_one_error(run, url, status)
        self.assertEqual(termios.tcgetattr(master), before)

    @defer.inlineCallbacks
    def test_code_piped_on_stdin(self):
        """``echo CODE | wormhole receive`` in a terminal: stdin a pipe,
        stdout and stderr the terminal."""
        url = closed_port_url()
        command = (f"echo 4-purple-sausages | exec {sys.executable} -m wormhole.cli "
                   f"--relay-url {url} receive")
        run, before, master = self.in_terminal(["/bin/sh", "-c", command])
        status = yield self.ended(run)
        self.check_one_error(run, url, status)
        self.assertEqual(termios.tcgetattr(master), before)
