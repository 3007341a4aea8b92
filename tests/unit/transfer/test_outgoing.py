"""What ``wormhole send PATH`` offers (wormhole.transfer._outgoing)."""
import os
import zipfile

from twisted.trial import unittest

from wormhole.errors import TransferError
from wormhole.transfer import _outgoing


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
        """A directory becomes a zipfile of relative '/' names:
        every file, and an entry ending in '/' for the empty directory
        (as the reference sends it); the offer counts files and bytes;
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
            # bytes that compress are deflated (test_incompressible_stored)
            self.assertEqual(zf.getinfo("sub/ä/ö.bin").compress_type, zipfile.ZIP_DEFLATED)
        self.assertEqual(names, ["a.txt", "empty-dir/", "sub/b", "sub/ä/ö.bin"])
        out.cleanup()
        self.assertFalse(os.path.exists(out.path))

    def test_incompressible_stored(self):
        """Bytes that deflating would not shrink (random, like photos or
        archives) are stored: the zip is no slower to build than the
        reference's; text beside them is still deflated, and both arrive
        intact."""
        noise = os.urandom(300_000)
        with open(os.path.join(self.tree, "noise.bin"), "wb") as f:
            f.write(noise)
        out = _outgoing.prepare(self.tree, tmpdir=self.base)
        with zipfile.ZipFile(out.path) as zf:
            kinds = {i.filename: i.compress_type for i in zf.infolist() if not i.is_dir()}
            self.assertEqual(zf.read("noise.bin"), noise)
            self.assertEqual(zf.read("sub/ä/ö.bin"), b"x" * 1000)
        self.assertEqual(kinds["noise.bin"], zipfile.ZIP_STORED)
        self.assertEqual(kinds["sub/ä/ö.bin"], zipfile.ZIP_DEFLATED)
        out.cleanup()

    def test_unsendable(self):
        """A file that cannot be read (a dangling link) stops the send and
        leaves no temporary zipfile behind..."""
        os.symlink("/no/such/target", os.path.join(self.tree, "dangling"))
        e = self.assertRaises(_outgoing.Unsendable, _outgoing.prepare, self.tree,
                              tmpdir=self.base)
        self.assertIsInstance(e, TransferError)
        self.assertIn("dangling", str(e))
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

    def zip_names(self, out):
        self.addCleanup(out.cleanup)
        with zipfile.ZipFile(out.path) as zf:
            return sorted(zf.namelist())

    def test_nested_empty_directories(self):
        """Only the innermost of nested empty directories gets an entry
        (unpacking it makes the others); a directory holding only an
        empty directory is not itself an entry."""
        os.makedirs(os.path.join(self.tree, "x", "y", "z"))
        out = _outgoing.prepare(self.tree, tmpdir=self.base)
        names = self.zip_names(out)
        self.assertIn("x/y/z/", names)
        self.assertNotIn("x/", names)
        self.assertNotIn("x/y/", names)
        self.assertEqual(out.offer["directory"]["numfiles"], 3)

    def test_link_to_directory_is_followed(self):
        """A link to a directory outside the tree is sent as the
        directory it leads to (its files, as the reference does)."""
        outside = os.path.join(self.base, "outside")
        os.makedirs(outside)
        with open(os.path.join(outside, "o.txt"), "wb") as f:
            f.write(b"outside")
        os.symlink(outside, os.path.join(self.tree, "linked"))
        out = _outgoing.prepare(self.tree, tmpdir=self.base)
        self.assertIn("linked/o.txt", self.zip_names(out))
        self.assertEqual(out.offer["directory"]["numbytes"], 1005 + 7)

    def test_link_loop_is_unsendable(self):
        """A link back to a directory being sent is a loop: refused,
        naming the link; skipped with --ignore-unsendable-files."""
        os.symlink("..", os.path.join(self.tree, "sub", "up"))
        e = self.assertRaises(TransferError, _outgoing.prepare, self.tree, tmpdir=self.base)
        self.assertIn("sub/up: a link to a directory that is already being sent", str(e))
        warnings = []
        out = _outgoing.prepare(self.tree, True, warnings.append, tmpdir=self.base)
        self.assertEqual(self.zip_names(out),
                         ["a.txt", "empty-dir/", "sub/b", "sub/ä/ö.bin"])
        self.assertEqual(len(warnings), 1)

    def test_fifo_is_unsendable(self):
        """A FIFO inside the tree is not read (it could block forever):
        refused as 'not a regular file (a FIFO)', or skipped."""
        os.mkfifo(os.path.join(self.tree, "pipe"))
        e = self.assertRaises(TransferError, _outgoing.prepare, self.tree, tmpdir=self.base)
        self.assertIn("pipe: not a regular file (a FIFO)", str(e))
        self.assertEqual(sorted(os.listdir(self.base)), ["tree"])
        warnings = []
        out = _outgoing.prepare(self.tree, True, warnings.append, tmpdir=self.base)
        self.assertNotIn("pipe", self.zip_names(out))
        self.assertIn("(a FIFO) (skipped)", warnings[0])

    def test_unlistable_directory_is_unsendable(self):
        """A directory that cannot be listed (os.walk's error) is refused,
        not silently left out."""
        from unittest import mock
        real_scandir = os.scandir

        def scandir(p):
            if os.path.basename(os.fspath(p)) == "ä":
                raise PermissionError(13, "Permission denied", p)
            return real_scandir(p)
        with mock.patch("os.scandir", scandir):
            e = self.assertRaises(TransferError, _outgoing.prepare, self.tree,
                                  tmpdir=self.base)
        self.assertIn("ä: Permission denied", str(e))

    def test_unreadable_file_is_unsendable(self):
        """A file that cannot be opened (permission denied; faked, as the
        tests run as root) is refused naming it, or skipped with
        --ignore-unsendable-files."""
        from unittest import mock
        real_open = open
        target = os.path.join(self.tree, "sub", "b")

        def fake_open(path, *args, **kwargs):
            if os.fspath(path) == target:
                raise PermissionError(13, "Permission denied", path)
            return real_open(path, *args, **kwargs)
        with mock.patch("builtins.open", fake_open):
            e = self.assertRaises(TransferError, _outgoing.prepare, self.tree,
                                  tmpdir=self.base)
            warnings = []
            out = _outgoing.prepare(self.tree, True, warnings.append, tmpdir=self.base)
        self.assertIn("sub/b: Permission denied", str(e))
        self.assertNotIn("sub/b", self.zip_names(out))
        self.assertEqual(warnings, [f"{target}: Permission denied (skipped)"])
