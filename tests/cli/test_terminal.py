"""The terminal is left as it was found (docs/cli.md "The terminal"): our
real ``wormhole`` in a pseudo-terminal, against our Mailbox server on
127.0.0.1, ended every way a user ends it -- an answer at the
``ok? (Y/n):`` prompt, Ctrl-C or SIGTERM there, the sender gone while the
question is open, Ctrl-C at the code prompt, ``share`` ended by the peer's
Ctrl-D or by ours. Each time the terminal's settings
(``termios.tcgetattr``) after the command are those it had before it
started, and the prompt is still readable on the final screen (pyte plays
what the terminal received). transfer-v2 and ``--classic`` alike where
both have the prompt. The progress bars keep off an open question
(docs/cli.md, "The terminal"): with several paths, and in ``share`` while
our own offer goes on; an ERROR line after an open question starts a
row."""
import os
import re
import termios

import pyte
from twisted.internet import defer, reactor
from twisted.trial import unittest

from ._process import CLIProcess, our_cli
from ._pty import open_terminal, spawn_in_pty
from ._servers import OurServer

PROMPT = "ok? (Y/n): "
CLASSIC = ["--classic"]
V2 = []


class Terminal(OurServer, unittest.TestCase):
    timeout = 60

    def setUp(self):
        d = super().setUp()
        self.out = os.path.abspath(self.mktemp())
        os.makedirs(self.out)
        return d

    def in_terminal(self, *args, name="receiver"):
        """Our ``wormhole ARGS`` in a new pseudo-terminal; ``self.before``
        is the terminal's settings before it started."""
        terminal = open_terminal()
        self.before = termios.tcgetattr(terminal[0])
        # our own copy of the master: the transport closes its own at the end
        self.terminal = os.dup(terminal[0])
        self.addCleanup(os.close, self.terminal)
        return spawn_in_pty(self, our_cli("--relay-url", self.url, *args), name,
                            cwd=self.out, terminal=terminal)

    def files(self, *names):
        """A folder holding small files ``names``."""
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        for name in names:
            with open(os.path.join(src, name), "w") as f:
                f.write("hello, terminal\n")
        return src

    def sender(self, code, protocol, *args, names=("hello.txt",)):
        return CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "send", "--no-qr", *protocol, *args, "--code", code,
            *names), name="sender", cwd=self.files(*names))

    def check_left_as_found(self, run, shown):
        """The settings equal those from before; ``shown`` is on the
        screen, at the start of a row (not glued to a progress bar); the
        cursor is at the start of a row (the shell's prompt that follows
        is not glued to ours)."""
        after = termios.tcgetattr(self.terminal)
        self.assertEqual(after, self.before, run.describe())
        screen = final_screen(run)
        self.assertEqual(screen.cursor.x, 0, "\n".join(screen.display))
        screen = screen.display
        # a long line wraps: the screen's rows, joined, read as it shows
        rows = "\n".join(screen)
        self.assertIn(shown, "".join(screen), "not on the screen:\n" + rows)
        self.assertTrue([row for row in screen if row.startswith(shown.split()[0])],
                        "not at the start of a row:\n" + rows)

    @defer.inlineCallbacks
    def at_the_prompt(self, code, protocol, *sender_args):
        """A sender offering a file and our receiver in a terminal, asking."""
        send = self.sender(code, protocol, *sender_args)
        recv = self.in_terminal("receive", *protocol, code)
        yield recv.wait_for(re.escape(PROMPT.encode()))
        return send, recv

    @defer.inlineCallbacks
    def interrupted_at_the_prompt(self, code, protocol, how):
        send, recv = yield self.at_the_prompt(code, protocol)
        how(recv)
        yield recv.ended
        self.check_left_as_found(recv, PROMPT.strip())
        yield send.kill()

    def test_ctrl_c_at_the_prompt_transfer_v2(self):
        """Ctrl-C (the terminal's interrupt character) at the question."""
        return self.interrupted_at_the_prompt("61-ctrl-c", V2, lambda r: r.write(b"\x03"))

    def test_ctrl_c_at_the_prompt_classic(self):
        return self.interrupted_at_the_prompt("62-ctrl-c", CLASSIC, lambda r: r.write(b"\x03"))

    def test_sigterm_at_the_prompt_transfer_v2(self):
        """SIGTERM (a ``kill``) while the question is open."""
        return self.interrupted_at_the_prompt(
            "63-sigterm", V2, lambda r: r.transport.signalProcess("TERM"))

    def test_sigterm_at_the_prompt_classic(self):
        return self.interrupted_at_the_prompt(
            "64-sigterm", CLASSIC, lambda r: r.transport.signalProcess("TERM"))

    @defer.inlineCallbacks
    def answered(self, code, protocol, answer, status):
        send, recv = yield self.at_the_prompt(code, protocol)
        recv.write(answer + b"\r")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual(recv.status, status, recv.describe() + send.describe())
        self.check_left_as_found(recv, PROMPT.strip())

    def test_yes_transfer_v2(self):
        """The normal way out: "y", the file arrives, exit 0."""
        return self.answered("65-yes", V2, b"y", 0)

    def test_yes_classic(self):
        return self.answered("66-yes", CLASSIC, b"y", 0)

    def test_no_transfer_v2(self):
        """An error exit: "n", declined, exit 3."""
        return self.answered("67-no", V2, b"n", 3)

    def test_no_classic(self):
        return self.answered("68-no", CLASSIC, b"n", 3)

    @defer.inlineCallbacks
    def test_ctrl_c_at_the_prompt_several_paths(self):
        """Two files offered in one transfer-v2 session: Ctrl-C at the
        first question."""
        send = self.sender("72-several", V2, names=("one.txt", "two.txt"))
        recv = self.in_terminal("receive", "72-several")
        yield recv.wait_for(re.escape(PROMPT.encode()))
        recv.write(b"\x03")
        yield recv.ended
        self.check_left_as_found(recv, PROMPT.strip())
        yield send.kill()

    @defer.inlineCallbacks
    def ctrl_c_at_the_verifier(self, code, protocol):
        """The sender's own question (--verify) in the terminal."""
        send = self.in_terminal("send", "--no-qr", "--verify", *protocol, "--code", code,
                                "hello.txt", name="sender")
        with open(os.path.join(self.out, "hello.txt"), "w") as f:
            f.write("hello, terminal\n")
        recv = CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "receive", "--accept-file", code), name="receiver",
            cwd=self.files())
        yield send.wait_for(rb"ok\? \(yes/no\): ")
        send.write(b"\x03")
        yield send.ended
        self.check_left_as_found(send, "Verifier ")
        yield recv.kill()

    def test_ctrl_c_at_the_verifier_transfer_v2(self):
        return self.ctrl_c_at_the_verifier("73-verifier", V2)

    def test_ctrl_c_at_the_verifier_classic(self):
        return self.ctrl_c_at_the_verifier("74-verifier", CLASSIC)

    @defer.inlineCallbacks
    def test_sender_gone_at_the_prompt(self):
        """The sender is killed while our human is asked (transfer-v2: the
        session ends once the peer has been unreachable for
        --peer-timeout), the question still open: nothing was transferred,
        so it fails (exit 1), saying the offer ended before we answered
        (docs/cli.md, "Messages")."""
        send = self.sender("69-gone", V2)
        recv = self.in_terminal("receive", "--peer-timeout", "3", "69-gone")
        yield recv.wait_for(re.escape(PROMPT.encode()))
        yield send.kill()
        yield recv.ended
        self.check_left_as_found(recv, PROMPT.strip())
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertRegex(recv.stdout.decode(), r"ERROR: the offer ended before we answered "
                                               r"\(the peer has been unreachable for 3(\.0)? s\)")
        # the question's line ended: the ERROR line has a row of its own
        screen = final_screen(recv).display
        self.assertIn(PROMPT.strip(), [row.rstrip() for row in screen], "\n".join(screen))
        self.assertTrue([row for row in screen if row.startswith("ERROR: the offer ended")],
                        "\n".join(screen))

    @defer.inlineCallbacks
    def test_several_paths_answered(self):
        """Two files in one transfer-v2 session, each asked about: the
        second question comes after the first file's bar and the
        session's, and still starts a row of its own and keeps it."""
        names = ("one.txt", "two.txt")
        send = self.sender("76-several", V2, names=names)
        recv = self.in_terminal("receive", "76-several")
        for name in names:
            yield recv.wait_for(rf"(?s)Offered file '{re.escape(name)}'.*".encode()
                                + re.escape(PROMPT.encode()))
            recv.write(b"y\r")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), recv.describe() + send.describe())
        self.check_left_as_found(recv, PROMPT.strip())
        screen = [row.rstrip() for row in final_screen(recv).display]
        self.assertEqual(screen.count(PROMPT + "y"), 2, "\n".join(screen))

    @defer.inlineCallbacks
    def test_ctrl_c_at_the_code_prompt(self):
        """Ctrl-C while the code is typed (readline with tab completion)."""
        recv = self.in_terminal("receive")
        yield recv.wait_for(rb"Enter receive wormhole code: ")
        recv.write(b"7-")
        yield recv.wait_for(rb"code: 7-")
        recv.write(b"\x03")
        yield recv.ended
        self.check_left_as_found(recv, "Enter receive wormhole code:")

    @defer.inlineCallbacks
    def share_pair(self, code, *their_paths):
        ours = self.in_terminal("share", "--code", code, name="share (terminal)")
        theirs = CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "share", "--code", code, *their_paths),
            name="share (pipe)", cwd=self.files(*their_paths))
        yield ours.wait_for(rb"Both sides may offer")
        yield theirs.wait_for(rb"Both sides may offer")
        return ours, theirs

    @defer.inlineCallbacks
    def test_share_ended_by_the_peer(self):
        """``share``: the peer ends the session with end of input (its
        Ctrl-D) while ours still reads lines."""
        ours, theirs = yield self.share_pair("70-share-peer")
        theirs.transport.closeStdin()
        yield defer.gatherResults([ours.ended, theirs.ended])
        self.assertEqual((ours.status, theirs.status), (0, 0),
                         ours.describe() + theirs.describe())
        self.check_left_as_found(ours, "Session complete.")

    @defer.inlineCallbacks
    def test_share_ended_by_ctrl_d(self):
        """``share``: our human ends it (Ctrl-D, the terminal's end of file)."""
        ours, theirs = yield self.share_pair("71-share-ours")
        ours.write(b"\x04")
        yield ours.ended
        theirs.transport.closeStdin()
        yield theirs.ended
        self.assertEqual(ours.status, 0, ours.describe())
        self.check_left_as_found(ours, "Session complete.")

    @defer.inlineCallbacks
    def test_share_prompt_while_our_offers_go_on(self):
        """``share``: while our human is asked about the peer's file, our
        own first offer is taken, ends, and the second begins (the peer
        sees it offered: ours has drawn, or not, all it would for the
        first). Nothing is drawn over the question: when it is
        answered, its row reads ``ok? (Y/n): y``; what was said
        meanwhile follows it, and the session ends cleanly."""
        for name in ("a.txt", "b.txt"):
            with open(os.path.join(self.out, name), "wb") as f:
                f.write(b"x" * 300000)
        ours = self.in_terminal("share", "--code", "77-share-busy", "a.txt", "b.txt",
                                name="share (terminal)")
        theirs = CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "share", "--code", "77-share-busy", "hello.txt"),
            name="share (pipe)", cwd=self.files("hello.txt"))
        yield ours.wait_for(re.escape(PROMPT.encode()))
        yield theirs.wait_for(re.escape(PROMPT.encode()))
        theirs.write(b"y\n")  # takes our a.txt
        yield theirs.wait_for(b"(?s)" + 2 * (re.escape(PROMPT.encode()) + b".*"))
        ours.write(b"y\r")  # takes their hello.txt
        yield ours.wait_for(rb"Received file written to")
        theirs.write(b"y\n")  # takes our b.txt
        yield theirs.wait_for(rb"(?s)(Received file written to.*){2}")
        ours.write(b"\x04")
        theirs.transport.closeStdin()
        yield defer.gatherResults([ours.ended, theirs.ended])
        self.assertEqual((ours.status, theirs.status), (0, 0),
                         ours.describe() + theirs.describe())
        self.check_left_as_found(ours, "Session complete.")
        screen = [row.rstrip() for row in final_screen(ours).display]
        shown = "\n".join(screen)
        self.assertIn(PROMPT + "y", screen, shown)
        after = screen[screen.index(PROMPT + "y"):]
        self.assertTrue([row for row in after if re.fullmatch(
            r"Sent file 'a\.txt' \(300\.0 kB\): 1 file(\(s\))? confirmed", row)], shown)
        self.assertIn("Offering file 'b.txt' (300.0 kB)", after, shown)

    @defer.inlineCallbacks
    def test_share_ctrl_c_at_the_prompt(self):
        """``share``: the peer offers a file, Ctrl-C at our question."""
        ours, theirs = yield self.share_pair("75-share-prompt", "hello.txt")
        yield ours.wait_for(re.escape(PROMPT.encode()))
        ours.write(b"\x03")
        yield ours.ended
        self.check_left_as_found(ours, PROMPT.strip())
        yield theirs.kill()


def final_screen(run):
    """An 80x40 terminal after all that ``run`` wrote (pyte)."""
    screen = pyte.Screen(80, 40)
    pyte.ByteStream(screen).feed(run.stdout)
    return screen
