"""What an interrupted transfer-v2 receive keeps
(docs/cli.md, "What an interrupted receive keeps (`wormhole.session`, `cli/_kept.py`)"): the one
line saying how much, where, that sending again resumes and how to discard
it; ``receive --discard-partial`` removing exactly the kept files (never a
link, never anything else); resume still working after the line; and the
30-day bound. Real ``wormhole`` processes (the receiver interrupted with
SIGINT mid-file, held at half by the gate of test_cancel), and the folder
rules on their own."""
import io
import os
import re
import time

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole import session as kept_partials
from wormhole.cli import _kept
from wormhole.cli._config import Config

from ..files._support import sha256_of
from ._gated import ENV, V2, GatedPair
from ._process import CLIProcess, our_cli

KEPT_LINE = (r"Kept (?P<size>[\d.]+ MB) of file 'big\.bin' \(16\.0 MB\) in (?P<folder>\S+) as "
             r"\.wormhole-partial-big\.bin\.resume: the same sent again into this folder "
             r"resumes from there; 'wormhole receive --discard-partial' in this folder "
             r"removes it")
KEPT_NAMES = [".wormhole-partial-big.bin.resume", ".wormhole-partial-big.bin.resume.json"]


class InterruptedReceive(GatedPair, unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def interrupted(self, code):
        """The receiver stopped by SIGINT at half: its kept-bytes line."""
        yield self.start(code, V2, accept=True)
        self.recv.transport.signalProcess("INT")
        yield defer.gatherResults([self.recv.ended, self.send.ended])
        self.assertEqual(self.recv.status, 130, self.recv.describe())
        lines = [line for line in self.recv.stderr.decode().splitlines()
                 if line.startswith("Kept ")]
        self.assertEqual(len(lines), 1, self.recv.describe())
        m = re.fullmatch(KEPT_LINE, lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertEqual(m.group("folder"), self.out)
        self.assertEqual(sorted(os.listdir(self.out)), KEPT_NAMES)
        kept = os.path.getsize(os.path.join(self.out, KEPT_NAMES[0]))
        self.assertEqual(m.group("size"), f"{kept / 1e6:.1f} MB")

    def receive(self, *args, stdin=None):
        return CLIProcess.spawn(self, reactor, our_cli("--relay-url", self.url, "receive",
                                                       *args),
                                name="receiver", env=ENV, cwd=self.out, stdin=stdin)

    @defer.inlineCallbacks
    def test_then_resumed(self):
        """The same file sent again (direct this time) resumes from the
        kept bytes and arrives whole."""
        yield self.interrupted("51-kept")
        send = CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "send", "--no-qr", "--hide-progress", "--code", "52-kept",
            "big.bin"), name="sender", env=ENV, cwd=self.src)
        recv = self.receive("--hide-progress", "--accept-file", "52-kept")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.assertRegex(recv.stderr.decode(), r"Resuming at byte [1-9]\d* of 16000000")
        # the question's line said so first
        self.assertRegex(recv.stderr.decode(), r"Offered file 'big\.bin' \(16\.0 MB\), resuming "
                                               r"after the [\d.]+ [kM]?B an interrupted "
                                               r"receive kept\n")
        self.assertEqual(os.listdir(self.out), ["big.bin"])
        self.assertEqual(sha256_of(os.path.join(self.out, "big.bin")),
                         sha256_of(os.path.join(self.src, "big.bin")))

    @defer.inlineCallbacks
    def test_then_discarded(self):
        """--discard-partial removes the two kept files and nothing else:
        not another hidden file, not a link planted under a kept name, not
        what that link points at; it makes no wormhole (no code)."""
        yield self.interrupted("53-kept")
        others = [".wormhole-partial-other.abcd1234", "notes.txt"]
        for name in others:
            with open(os.path.join(self.out, name), "w") as f:
                f.write("not kept by a receive\n")
        outside = os.path.abspath(self.mktemp())
        with open(outside, "w") as f:
            f.write("outside\n")
        os.symlink(outside, os.path.join(self.out, ".wormhole-partial-x.resume.json"))
        run = self.receive("--discard-partial")
        yield run.ended
        self.assertEqual(run.status, 0, run.describe())
        self.assertRegex(run.stderr.decode(),
                         r"^Removed [\d.]+ MB kept by an interrupted receive: "
                         + re.escape(", ".join(KEPT_NAMES)) + "\n$")
        self.assertEqual(sorted(os.listdir(self.out)),
                         sorted(others + [".wormhole-partial-x.resume.json"]))
        with open(outside) as f:
            self.assertEqual(f.read(), "outside\n")


class FolderRules(unittest.TestCase):
    """``wormhole.session``'s kept partials on a folder made by hand."""

    def setUp(self):
        self.folder = os.path.abspath(self.mktemp())
        os.makedirs(self.folder)

    def make(self, name, data=b"x" * 10):
        path = os.path.join(self.folder, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_a_kept_folder_is_removed_without_following_links(self):
        kept = os.path.join(self.folder, ".wormhole-partial-d.resume")
        os.makedirs(os.path.join(kept, "sub"))
        with open(os.path.join(kept, "sub", "a"), "wb") as f:
            f.write(b"y" * 100)
        outside = os.path.abspath(self.mktemp())
        os.makedirs(outside)
        with open(os.path.join(outside, "precious"), "wb") as f:
            f.write(b"z" * 1000)
        os.symlink(outside, os.path.join(kept, "link"))
        self.make(".wormhole-partial-d.resume.json")
        [found] = kept_partials.kept_in(self.folder)
        self.assertEqual((found.base, found.nbytes), ("d", 100))
        self.assertEqual([k.base for k in kept_partials.discard(self.folder)], ["d"])
        self.assertEqual(os.listdir(self.folder), [])
        self.assertEqual(os.listdir(outside), ["precious"])

    def test_only_our_names(self):
        for name in (".wormhole-partial-.resume", ".wormhole-partial-a.txt", "a.resume",
                     ".wormhole-partial-a.resume.json.old"):
            self.make(name)
        self.assertEqual(kept_partials.kept_in(self.folder), [])

    def test_expire_removes_only_what_is_older_than_the_bound(self):
        now = time.time()
        old = self.make(".wormhole-partial-old.resume")
        old_state = self.make(".wormhole-partial-old.resume.json")
        self.make(".wormhole-partial-new.resume")
        limit = kept_partials.MAX_AGE_DAYS * 86400
        for path in (old, old_state):
            os.utime(path, (now - limit - 60, now - limit - 60))
        self.assertEqual([k.base for k in kept_partials.expire(self.folder, now)], ["old"])
        self.assertEqual(os.listdir(self.folder), [".wormhole-partial-new.resume"])

    def test_the_line_for_an_offers_target(self):
        self.make(".wormhole-partial-f.resume", b"a" * 2500)
        kept = kept_partials.kept_for(os.path.join(self.folder, "f"))
        self.assertEqual(kept.nbytes, 2500)
        self.assertIsNone(kept_partials.kept_for(os.path.join(self.folder, "g")))
        self.assertEqual(_kept.kept_line(kept, "file 'f' (9.0 kB)"),
                         f"Kept 2.5 kB of file 'f' (9.0 kB) in {self.folder} as "
                         ".wormhole-partial-f.resume: the same sent again into this folder "
                         "resumes from there; 'wormhole receive --discard-partial' in this "
                         "folder removes it")

    def test_discard_command_in_an_empty_folder(self):
        err = io.StringIO()
        _kept.discard_command(Config(cwd=self.folder, stderr=err))
        self.assertEqual(err.getvalue(), f"Nothing kept by an interrupted receive in "
                                         f"{self.folder}\n")
