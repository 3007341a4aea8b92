"""``ui.terminal.TerminalState`` and ``ui.prompt.TerminalLines`` on a real
pseudo-terminal and a pipe, in this process: the settings put back
after a change, nothing done without a terminal, and a question read
from the terminal's own line mode."""
import io
import os
import termios
import tty

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli.ui import prompt as _prompt
from wormhole.cli.ui.terminal import TerminalState


class Restore(unittest.TestCase):

    def terminal(self):
        master, slave = os.openpty()
        self.addCleanup(os.close, master)
        stream = os.fdopen(slave, "rb", buffering=0)
        self.addCleanup(stream.close)
        return master, stream

    def test_settings_put_back(self):
        """Raw mode set inside the block (as readline does while it waits)
        is undone when the block ends, also by an exception."""
        master, stream = self.terminal()
        before = termios.tcgetattr(master)
        with self.assertRaises(KeyboardInterrupt):
            with TerminalState(stream):
                tty.setraw(stream.fileno())
                self.assertNotEqual(termios.tcgetattr(master), before)
                raise KeyboardInterrupt()
        self.assertEqual(termios.tcgetattr(master), before)

    def test_no_terminal(self):
        """A pipe or a file: nothing to save, nothing to restore."""
        state = TerminalState(io.StringIO("y\n"))
        state.restore()
        read, write = os.pipe()
        self.addCleanup(os.close, read)
        self.addCleanup(os.close, write)
        with open(read, closefd=False) as stream, TerminalState(stream):
            pass


class ReadLine(unittest.TestCase):

    def lines(self):
        """(the terminal's master side, TerminalLines on its slave side,
        what it wrote)."""
        master, slave = os.openpty()
        self.addCleanup(os.close, master)
        stdin = os.fdopen(slave, "r")
        self.addCleanup(stdin.close)
        stdout = io.StringIO()
        return master, _prompt.TerminalLines(stdin, stdout), stdout

    @defer.inlineCallbacks
    def test_line_then_end_of_input(self):
        """The prompt is written, one line comes back without its newline,
        and the terminal's end of file (Ctrl-D) is EOFError."""
        master, lines, stdout = self.lines()
        d = lines.read_line(reactor, "ok? (Y/n): ")
        os.write(master, b"yes\n")
        self.assertEqual((yield d), "yes")
        self.assertEqual(stdout.getvalue(), "ok? (Y/n): ")
        d = lines.read_line(reactor, "again: ")
        os.write(master, b"\x04")  # the terminal's end of file (Ctrl-D)
        yield self.assertFailure(d, EOFError)
        # and every later question at once
        yield self.assertFailure(lines.read_line(reactor, "more? "), EOFError)

    @defer.inlineCallbacks
    def test_a_question_given_up_leaves_the_line_to_the_next(self):
        """A question given up while its read is blocked (its offer
        ended): the line typed next answers the question asked after it,
        read by the one blocked read, not by a second reader racing it."""
        master, lines, stdout = self.lines()
        stale = lines.read_line(reactor, "ok? (Y/n): ")
        stale.cancel()
        yield self.assertFailure(stale, defer.CancelledError)
        d = lines.read_line(reactor, "ok? (Y/n): ")
        os.write(master, b"n\n")
        self.assertEqual((yield d), "n")
        d = lines.read_line(reactor, "ok? (Y/n): ")
        os.write(master, b"y\n")
        self.assertEqual((yield d), "y")
