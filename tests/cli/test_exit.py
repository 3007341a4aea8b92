"""How a ``wormhole`` process ends (``wormhole.cli._collector``;
docs/performance.md, "Session 8: the fixed part"): run as the program, the
CLI freezes what survives once the reactor has stopped, so the
interpreter's finalization does not walk it. Nothing may be lost by that:
a received file and folder are whole under their own names, stdout and
stderr reach a pipe whole, the exit status is the command's. A call with
its own arguments (a test, a program embedding the CLI) leaves the
collector as it found it.

Each process runs under ``PROBE``, which reports the collector's state
from an atexit handler (registered first, so it runs after the CLI's):
that the freeze happened in the run being checked."""
import os
import re
import subprocess
import sys

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli.ui.wording import V2_USED

from .._processes import free_port
from ..transfer_v2._support import ENV, _CLIBase, read_tree, write_tree
from ._process import CLIProcess

PROBE = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: sys.stderr.write("
    "f'PROBE frozen={gc.get_freeze_count()} enabled={gc.isenabled()}\\n'))\n"
    "from wormhole.cli.cli import wormhole\n"
    "wormhole(prog_name='wormhole')\n")
# stdout and stderr block-buffered on the pipes, as for any program
# whose output is not a terminal: what the exit does not flush is lost
BUFFERED = dict(ENV, PYTHONUNBUFFERED="")
PROBED = rb"PROBE frozen=(\d+) enabled=(True|False)\n"


def probed(*args):
    return [sys.executable, "-c", PROBE, *args]


class ProgramExit(_CLIBase):
    def spawn(self, argv, name, stdin=None, cwd=None):
        return CLIProcess.spawn(self, reactor, argv, stdin=stdin, name=name, env=BUFFERED,
                                cwd=cwd)

    def ours(self, *args, **kwargs):
        return probed(*super().ours(*args, **kwargs)[3:])

    def assertFrozenAtExit(self, run):
        """The probe's line is stderr's last: the freeze happened, and
        nothing the CLI wrote after it went missing."""
        found = re.findall(PROBED, run.stderr)
        self.assertEqual(len(found), 1, run.describe())
        self.assertTrue(run.stderr.endswith(b"\n") and re.search(PROBED + rb"\Z", run.stderr),
                        run.describe())
        self.assertGreater(int(found[0][0]), 0, run.describe())

    @defer.inlineCallbacks
    def test_files_whole_after_the_exit(self):
        """A file and a folder over transfer-v2: the receiver's copies are
        whole under their own names (no temporary name left), both sides
        said all they say (the receiver's session line before the probe's),
        both exit 0, both froze."""
        tree = {"a.txt": b"A" * 70_000, "sub/b.bin": os.urandom(300_000), "sub/c": b""}
        write_tree(os.path.join(self.src, "dir"), tree)
        data = os.urandom(1_000_000)
        with open(os.path.join(self.src, "one.bin"), "wb") as f:
            f.write(data)
        send, recv = yield self.run_pair(
            self.ours("send", "--no-qr", os.path.join(self.src, "one.bin"),
                      os.path.join(self.src, "dir")),
            self.ours("receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertIn(V2_USED.encode(), recv.stderr)
        self.assertEqual(sorted(os.listdir(self.dst)), ["dir", "one.bin"])
        self.assertEqual(read_tree(os.path.join(self.dst, "dir")), tree)
        self.assertSameFile("one.bin")
        self.assertRegex(recv.stderr, rb"Session: 2 of 2 offers received \(4 files\); .*\n"
                                      + PROBED + rb"\Z")
        self.assertFrozenAtExit(send)
        self.assertFrozenAtExit(recv)

    @defer.inlineCallbacks
    def test_text_reaches_a_pipe_whole(self):
        """A text of ~65 KB received with stdout on a pipe (block-buffered):
        all of it arrives, then the newline; exit 0."""
        # printable: shown as it is (others are escaped, as the reference does)
        text = "".join(f"word {i} \u00fcber, " for i in range(4000))
        send, recv = yield self.run_pair(self.ours("send", "--no-qr", "--text", text),
                                         self.ours("receive"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, text.encode() + b"\n")
        self.assertFrozenAtExit(recv)

    @defer.inlineCallbacks
    def test_a_failure_keeps_its_status_and_message(self):
        """A Mailbox server that refuses the connection: exit 1, the ERROR
        line on stderr whole, then the probe's."""
        url = f"ws://127.0.0.1:{free_port()}/v1"
        recv = self.spawn(probed("--relay-url", url, "receive", "1-a-b"), "receiver")
        self.runs = (recv,)
        yield recv.ended
        self.assertExit(recv, 1)
        self.assertRegex(recv.stderr, rb"ERROR: [^\n]+\n" + PROBED + rb"\Z")
        self.assertFrozenAtExit(recv)


class CalledWithArguments(unittest.TestCase):
    def test_collector_left_alone(self):
        """The group called with its own arguments runs the command the
        same way (here one that fails at once), but leaves the collector
        enabled and nothing frozen."""
        url = f"ws://127.0.0.1:{free_port()}/v1"
        code = ("import gc, sys\n"
                "from wormhole.cli.cli import wormhole\n"
                "try:\n"
                f"    wormhole(['--relay-url', {url!r}, 'receive', '1-a-b'])\n"
                "except SystemExit as e:\n"
                "    print('status', e.code, gc.isenabled(), gc.get_freeze_count())\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=dict(os.environ, **ENV), timeout=60)
        self.assertIn("ERROR:", out.stderr)
        self.assertEqual(out.stdout.strip(), "status 1 True 0")
