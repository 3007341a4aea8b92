"""What ``wormhole send PATH`` offers (wormhole.cli._outgoing)."""
import os
import zipfile

from twisted.trial import unittest

from wormhole.cli import _outgoing
from wormhole.errors import TransferError


class Prepare(unittest.TestCase):

    def setUp(self):
        self.base = os.path.abspath(self.mktemp())
        self.tree = os.path.join(self.base, "tree")
        os.makedirs(os.path.join(self.tree, "sub", "ä"))
        os.makedirs(os.path.join(self.tree, "empty-dir"))
        for rel, data in (("a.txt", b"hello"), ("sub/b", b""), ("sub/ä/ö.bin", b"x" * 1000)):
            with open(os.path.join(self.tree, *rel.split("/")), "wb") as f:
                f.write(data)

    def test_file(self):
        """A file is offered with its base name and size, sent as is."""
        out = _outgoing.prepare(os.path.join(self.tree, "a.txt"))
        self.assertEqual(out.offer, {"file": {"filename": "a.txt", "filesize": 5}})
        with out.open() as f:
            self.assertEqual(f.read(), b"hello")
        out.cleanup()
        self.assertTrue(os.path.exists(os.path.join(self.tree, "a.txt")))

    def test_directory(self):
        """A directory becomes a deflated zipfile of relative '/' names
        (files only: no entry for the empty directory); the offer counts
        files and bytes;
        cleanup() removes the temporary zipfile."""
        out = _outgoing.prepare(self.tree + "/", tmpdir=self.base)
        d = out.offer["directory"]
        self.assertEqual((d["mode"], d["dirname"], d["numfiles"], d["numbytes"]),
                         ("zipfile/deflated", "tree", 3, 1005))
        self.assertEqual(d["zipsize"], out.size)
        self.assertEqual(os.path.getsize(out.path), out.size)
        with zipfile.ZipFile(out.path) as zf:
            names = sorted(zf.namelist())
            self.assertEqual(zf.read("sub/ä/ö.bin"), b"x" * 1000)
            self.assertTrue(all(i.compress_type == zipfile.ZIP_DEFLATED
                                for i in zf.infolist() if not i.is_dir()))
        self.assertEqual(names, ["a.txt", "sub/b", "sub/ä/ö.bin"])
        out.cleanup()
        self.assertFalse(os.path.exists(out.path))

    def test_unsendable(self):
        """A file that cannot be read (a dangling link) stops the send and
        leaves no temporary zipfile behind..."""
        os.symlink("/no/such/target", os.path.join(self.tree, "dangling"))
        e = self.assertRaises(TransferError, _outgoing.prepare, self.tree, tmpdir=self.base)
        self.assertIn("dangling", str(e))
        self.assertIn("--ignore-unsendable-files", str(e))
        self.assertEqual(sorted(os.listdir(self.base)), ["tree"])

    def test_ignore_unsendable(self):
        """... or is skipped with a warning with --ignore-unsendable-files."""
        os.symlink("/no/such/target", os.path.join(self.tree, "dangling"))
        warnings = []
        out = _outgoing.prepare(self.tree, True, warnings.append, tmpdir=self.base)
        self.addCleanup(out.cleanup)
        self.assertEqual(out.offer["directory"]["numfiles"], 3)
        self.assertEqual(len(warnings), 1)
        self.assertIn("dangling", warnings[0])

    def test_missing(self):
        """A path that does not exist is named in the error."""
        e = self.assertRaises(TransferError, _outgoing.prepare, "/no/such")
        self.assertIn("/no/such", str(e))
