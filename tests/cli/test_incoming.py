"""The receiver's safety rules (wormhole.cli._incoming): zip-slip,
links out of the target, size bounds, names, free space, no overwrite,
temporary names."""
import hashlib
import os
import stat
import zipfile

from twisted.trial import unittest

from wormhole.cli import _incoming
from wormhole.cli._incoming import Refused


def make_zip(path, entries):
    """entries: (name, data) or (name, data, "link") for a symlink entry."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for entry in entries:
            name, data = entry[0], entry[1]
            info = zipfile.ZipInfo(name)
            if len(entry) > 2:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, data)


class Zip(unittest.TestCase):

    def setUp(self):
        self.base = os.path.abspath(self.mktemp())
        os.makedirs(self.base)
        self.zip = os.path.join(self.base, "in.zip")
        self.target = os.path.join(self.base, "out")

    def receive(self, entries, max_bytes=10**6):
        make_zip(self.zip, entries)
        _incoming.receive_directory_into(self.zip, self.target, max_bytes)

    def assertRefusedAndClean(self, entries, words, max_bytes=10**6):
        e = self.assertRaises(Refused, self.receive, entries, max_bytes)
        self.assertIn(words, str(e))
        # nothing under the final name, no temporary directory left
        self.assertEqual(sorted(os.listdir(self.base)), ["in.zip"])
        return e

    def test_plain_tree(self):
        """Files, nested folders, empty files, empty directories and
        non-ASCII names are unpacked under the target."""
        self.receive([("a.txt", b"A"), ("sub/deep/b", b"BB"), ("sub/empty", b""),
                      ("leer/", b""), ("ünï/cödé.txt", b"\xff")])
        with open(os.path.join(self.target, "sub", "deep", "b"), "rb") as f:
            self.assertEqual(f.read(), b"BB")
        self.assertTrue(os.path.isdir(os.path.join(self.target, "leer")))
        self.assertEqual(os.path.getsize(os.path.join(self.target, "sub", "empty")), 0)
        self.assertTrue(os.path.exists(os.path.join(self.target, "ünï", "cödé.txt")))

    def test_dotdot(self):
        """An entry with '..' is refused before anything is written."""
        self.assertRefusedAndClean([("a", b"1"), ("x/../../evil", b"2")], "'..'")
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.base), "evil")))

    def test_absolute(self):
        """An absolute entry name is refused."""
        self.assertRefusedAndClean([("/tmp/evil", b"2")], "absolute")

    def test_windows_absolute(self):
        """A drive-letter or backslash-climbing name is refused too."""
        self.assertRefusedAndClean([("C:\\evil", b"2")], "absolute")
        self.assertRefusedAndClean([("a\\..\\..\\evil", b"2")], "'..'")

    def test_link_out_relative(self):
        """A link entry pointing above the target is refused."""
        self.assertRefusedAndClean([("sub/l", b"../../etc", "link")], "link out")

    def test_link_absolute(self):
        """A link entry to an absolute path is refused."""
        self.assertRefusedAndClean([("l", b"/etc/passwd", "link")], "absolute")

    def test_link_inside(self):
        """A link that stays inside is made, after the files (so nothing
        is written through it)."""
        self.receive([("sub/f", b"x"), ("l", b"sub/f", "link")])
        self.assertEqual(os.readlink(os.path.join(self.target, "l")), "sub/f")

    def test_entry_through_link(self):
        """A file entry whose path goes through a link entry is written
        as a plain file in a real directory: links are made last, and the
        link entry then collides and the transfer fails cleanly."""
        self.assertRefusedAndClean([("d", b".", "link"), ("d/x", b"data")], "collides")

    def test_more_than_announced(self):
        """Entries whose sizes add up to more than the offer's numbytes
        are refused (a zip bomb cannot fill the disk)."""
        self.assertRefusedAndClean([("a", b"x" * 600), ("b", b"y" * 600)],
                                   "more than the 1000", max_bytes=1000)

    def test_duplicate_entry(self):
        """The same name twice is refused, not overwritten."""
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns about duplicates
            self.assertRefusedAndClean([("a", b"1"), ("a", b"2")], "twice")

    def test_existing_target(self):
        """An existing target directory is never replaced."""
        os.makedirs(self.target)
        make_zip(self.zip, [("a", b"1")])
        self.assertRaises(Refused, _incoming.receive_directory_into, self.zip,
                          self.target, 100)
        self.assertEqual(os.listdir(self.target), [])


class Names(unittest.TestCase):

    def test_offered_name(self):
        """Only the last component of the offered name is used."""
        self.assertEqual(_incoming.offered_name("file", {"filename": "../../x.txt"}), "x.txt")
        self.assertEqual(_incoming.offered_name("file", {"filename": "C:\\a\\b"}), "b")
        self.assertEqual(_incoming.offered_name("directory", {"dirname": "d/"}), "d")

    def test_bad_names(self):
        """Empty, '.', '..', NUL and missing names are refused."""
        for bad in ("", ".", "..", "a\x00b", "/", None, 7):
            self.assertRaises(Refused, _incoming.offered_name, "file", {"filename": bad})

    def test_room(self):
        """check_room asks the injected free-space function about the
        target's directory."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        asked = []

        def free(path):
            asked.append(path)
            return 100
        _incoming.check_room(free, os.path.join(base, "f"), 100)
        self.assertRaises(Refused, _incoming.check_room, free, os.path.join(base, "f"), 101)
        self.assertEqual(asked, [base, base])

    def test_unwritable_or_missing_directory(self):
        """A target directory that is missing or not writable is refused
        before anything is accepted."""
        base = os.path.abspath(self.mktemp())
        e = self.assertRaises(Refused, _incoming.check_room, lambda p: 10**9,
                              os.path.join(base, "f"), 1)
        self.assertIn("no such directory", str(e))
        os.makedirs(base)
        self.patch(os, "access", lambda path, mode: False)
        e = self.assertRaises(Refused, _incoming.check_room, lambda p: 10**9,
                              os.path.join(base, "f"), 1)
        self.assertIn("permission denied", str(e))


class Partial(unittest.TestCase):

    def setUp(self):
        self.base = os.path.abspath(self.mktemp())
        os.makedirs(self.base)
        self.target = os.path.join(self.base, "f.bin")

    def test_temporary_name_until_commit(self):
        """Bytes go to a hidden name; finish() returns their sha256;
        commit() gives the final name."""
        p = _incoming.PartialFile(self.target)
        p.write(b"abc")
        self.assertFalse(os.path.exists(self.target))
        self.assertTrue(os.path.basename(p.path).startswith(_incoming.PARTIAL_PREFIX))
        self.assertEqual(p.finish(), hashlib.sha256(b"abc").hexdigest())
        p.commit()
        self.assertEqual(os.listdir(self.base), ["f.bin"])

    def test_finish_fsyncs_before_returning(self):
        """finish() flushes and fsyncs the temporary file (so the rename
        that follows never names bytes still in flight) and returns the
        sha256 of the bytes as they were written."""
        p = _incoming.PartialFile(self.target)
        p.write(b"ab")
        p.write(b"c")
        synced = []
        real_fsync = os.fsync

        def fsync(fd):
            with open(p.path, "rb") as f:
                synced.append(f.read())
            real_fsync(fd)
        self.patch(_incoming.os, "fsync", fsync)
        self.assertEqual(p.finish(), hashlib.sha256(b"abc").hexdigest())
        self.assertEqual(synced, [b"abc"])

    def test_commit_never_replaces(self):
        """A file that appeared under the final name meanwhile is kept."""
        p = _incoming.PartialFile(self.target)
        p.write(b"new")
        p.finish()
        with open(self.target, "wb") as f:
            f.write(b"old")
        self.assertRaises(Refused, p.commit)
        with open(self.target, "rb") as f:
            self.assertEqual(f.read(), b"old")
        self.assertEqual(os.listdir(self.base), ["f.bin"])

    def test_abort(self):
        """abort() removes the temporary file."""
        p = _incoming.PartialFile(self.target)
        p.write(b"abc")
        p.abort()
        self.assertEqual(os.listdir(self.base), [])
