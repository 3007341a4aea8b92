"""A folder transfer killed half way and finished by a new session (the
"resume" feature for directory offers, docs/transfer-v2.md "Resume"),
with the real commands as processes: the receiving `wormhole receive` is
killed (SIGKILL) once it holds about half the folder, then a new
`wormhole send` / `wormhole receive` pair with a new code sends only what
is missing. Small data (16 MB): the receiver is paused and let go in
short steps (SIGSTOP/SIGCONT) once the transfer starts, so it is killed
at about half whatever the machine's speed."""
import os
import re
import signal

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater

from ._support import _CLIBase, read_tree, write_tree

FILES = 32
FILE_SIZE = 512 * 1024
TOTAL = FILES * FILE_SIZE


class DirectoryKilled(_CLIBase):
    def journal_lines(self):
        path = os.path.join(self.dst, ".wormhole-partial-tree.resume.json")
        try:
            with open(path, "rb") as f:
                return f.read().count(b"\n") - 1  # less the line naming the offer
        except OSError:
            return -1

    @defer.inlineCallbacks
    def until_half(self, recv):
        """Run the receiver in short steps from the moment its hidden folder
        exists until it verified half the files."""
        for _ in range(6000):
            if self.journal_lines() >= 0:
                break
            yield deferLater(reactor, 0.01, lambda: None)
        recv.transport.signalProcess(signal.SIGSTOP)
        for _ in range(6000):
            if self.journal_lines() >= FILES // 2:
                return
            recv.transport.signalProcess(signal.SIGCONT)
            yield deferLater(reactor, 0.005, lambda: None)
            recv.transport.signalProcess(signal.SIGSTOP)
            yield deferLater(reactor, 0.005, lambda: None)
        self.fail("the receiver never verified half the files")

    @defer.inlineCallbacks
    def test_receiver_killed(self):
        """The receiver killed after about half the folder: the next pair
        of commands skips what it verified (the sender says how much it
        sent, the receiver where it resumes) and the tree, its empty
        folder included, arrives exact."""
        tree = os.path.join(self.src, "tree")
        write_tree(tree, {f"d{i % 4}/f{i:02}": os.urandom(FILE_SIZE) for i in range(FILES)})
        os.makedirs(os.path.join(tree, "empty", "emptier"))
        argv = self.ours("send", "--transfer-v2", "--hide-progress", tree)
        send = self.spawn(argv, "sender")
        m = yield send.wait_for(rb"wormhole receive (\S+)")
        recv = self.spawn(self.ours("receive", "--hide-progress", "--accept-file",
                                    m.group(1).decode()), "receiver", cwd=self.dst)
        yield self.until_half(recv)
        yield self.kill_then_interrupt(recv, send)
        self.assertNotIn("tree", os.listdir(self.dst))
        send, recv = yield self.run_pair(argv, self.ours("receive", "--hide-progress",
                                                         "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        m = re.search(rb"resumed at byte (\d+), (\d+) bytes sent", send.stderr)
        self.assertIsNotNone(m, send.describe())
        held, sent = int(m.group(1)), int(m.group(2))
        self.assertGreaterEqual(held, FILES // 2 * FILE_SIZE)
        self.assertLess(held, TOTAL)
        self.assertEqual(held + sent, TOTAL)
        self.assertIn(f"Resuming at byte {held}".encode(), recv.stderr)
        self.assertEqual(sorted(os.listdir(self.dst)), ["tree"])
        self.assertEqual(read_tree(os.path.join(self.dst, "tree"), folders=True),
                         read_tree(tree, folders=True))
