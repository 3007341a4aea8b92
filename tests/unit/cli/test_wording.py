"""What the transfer commands say (``cli.ui.wording``): counts with their
plurals, the sender's announcement before the code (the reference 0.24's
words for one path), offers and what arrived; in memory."""
import io

from twisted.internet import defer
from twisted.trial import unittest

from wormhole.cli import _announce
from wormhole.cli._config import Config
from wormhole.cli.ui.wording import count, describe, sending_paths, sending_text, written_to
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2._source import Outgoing, OutgoingFile


def a_file(name, size):
    return Outgoing(M.FileOffer(name, 1700000000, size),
                    [OutgoingFile("/src/" + name, (name,), size, 0)])


def a_directory(base, sizes):
    files = [OutgoingFile(f"/src/{base}/{i}", (str(i),), size, 0)
             for i, size in enumerate(sizes)]
    return Outgoing(M.DirectoryOffer(base, sum(sizes), [f.segments for f in files]), files)


class Count(unittest.TestCase):

    def test_one_is_singular(self):
        """1 file, 1 directory: no plural."""
        self.assertEqual((count(1, "file"), count(1, "directory")), ("1 file", "1 directory"))

    def test_other_counts_are_plural(self):
        """0 and 2 and more take the plural, "y" becoming "ies"."""
        self.assertEqual([count(n, "file") for n in (0, 2, 31)],
                         ["0 files", "2 files", "31 files"])
        self.assertEqual(count(2, "directory"), "2 directories")


class Describe(unittest.TestCase):

    def test_directory_of_one_file(self):
        """A directory holding one file says "1 file", not "1 files"."""
        o = a_directory("d", [2])
        self.assertEqual(describe(o.offer, True), "directory 'd' (1 file, 2 Bytes)")

    def test_directory_of_several_files(self):
        o = a_directory("d", [1000, 1000, 2000])
        self.assertEqual(describe(o.offer, True), "directory 'd' (3 files, 4.0 kB)")

    def test_file(self):
        o = a_file("a.txt", 12)
        self.assertEqual(describe(o.offer, False), "file 'a.txt' (12 Bytes)")


class Announcement(unittest.TestCase):
    """The sender's line before the code."""

    def test_one_file_in_the_reference_words(self):
        """One file: the reference 0.24's "Sending 31.5 MB file named 'B.bin'"."""
        self.assertEqual(sending_paths([a_file("B.bin", 31_500_000)]),
                         "Sending 31.5 MB file named 'B.bin'")

    def test_one_directory(self):
        """One directory: the reference's form, its files and their size
        in place of a zipfile's compressed size (there is none yet)."""
        self.assertEqual(sending_paths([a_directory("photos", [1500, 1500])]),
                         "Sending directory (2 files, 3.0 kB) named 'photos'")
        self.assertEqual(sending_paths([a_directory("one", [5])]),
                         "Sending directory (1 file, 5 Bytes) named 'one'")

    def test_several_paths_summed_up(self):
        """Several: one line, how many of each kind and the total size."""
        paths = [a_file("a", 1000), a_directory("d", [500, 500]), a_file("b", 1000)]
        self.assertEqual(sending_paths(paths), "Sending 3 paths: 2 files and 1 directory (3.0 kB)")
        self.assertEqual(sending_paths([a_directory("x", [1]), a_directory("y", [1])]),
                         "Sending 2 paths: 2 directories (2 Bytes)")
        self.assertEqual(sending_paths([a_file("x", 1), a_directory("y", [1])]),
                         "Sending 2 paths: 1 file and 1 directory (2 Bytes)")

    def test_names_escaped(self):
        """A local name with control characters cannot drive the terminal."""
        self.assertEqual(sending_paths([a_file("a\x1b[2Jb", 1)]),
                         "Sending 1 Byte file named 'a\\x1b[2Jb'")

    def test_text(self):
        """A text: the reference's words, its length in characters."""
        self.assertEqual(sending_text("hello"), "Sending text message (5 Bytes)")
        self.assertEqual(sending_text("é" * 1500), "Sending text message (1.5 kB)")


class WrittenTo(unittest.TestCase):

    def test_directory_says_directory(self):
        """A directory says so, even with one file (it said "file")."""
        self.assertEqual(written_to(True, "/r/d"), "Received directory written to: /r/d")

    def test_file(self):
        self.assertEqual(written_to(False, "/r/f"), "Received file written to: /r/f")


class _CodeOnly:
    """A wormhole as far as announce_code uses it: the code is known."""

    def __init__(self, code):
        self.code = code

    def set_code(self, code):
        self.code = code

    def allocate_code(self, length):
        pass

    def get_code(self):
        return defer.succeed(self.code)


class CodeAnnouncement(unittest.TestCase):
    """``_announce.announce_code``: the code line, its QR code, then the
    instructions (the reference 0.24's order)."""

    def announce(self, **kw):
        cfg = Config(relay_url="ws://example/v1", stderr=io.StringIO(), **kw)
        self.successResultOf(_announce.announce_code(cfg, _CodeOnly("5-red-tree")))
        return cfg.stderr.getvalue()

    def test_qr_between_code_and_instructions(self):
        out = self.announce(qr=True)
        first, rest = out.split("\n", 1)
        self.assertEqual(first, "Wormhole code is: 5-red-tree")
        qr, after = rest.split("On the other computer, please run:\n", 1)
        self.assertGreater(len(qr.splitlines()), 10)
        self.assertTrue(set(qr) <= set("\u2580\u2584\u2588\u00a0 \n"), qr)
        self.assertEqual(after, "\nwormhole receive 5-red-tree\n\n")

    def test_no_qr(self):
        self.assertEqual(self.announce(qr=False),
                         "Wormhole code is: 5-red-tree\nOn the other computer, please run:\n\n"
                         "wormhole receive 5-red-tree\n\n")

    def test_zeromode_has_no_code_and_no_qr(self):
        """-0: no code to show, nothing to scan; receive -0 (with --verify)."""
        self.assertEqual(self.announce(qr=True, zeromode=True, verify=True),
                         "On the other computer, please run:\n\nwormhole receive --verify -0\n\n")
