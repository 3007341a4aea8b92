"""The receiving rules (wormhole._landing), and classic's unpacker that
applies them to a zipfile: zip-slip, links out of the target, size
bounds, names, free space, no overwrite, temporary names."""
import hashlib
import os
import stat
import zipfile

from twisted.trial import unittest

from wormhole import _landing
from wormhole._landing import BadName, Refused
from wormhole.transfer import _unzip


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

    def receive(self, entries, max_bytes=10**6, max_files=100):
        make_zip(self.zip, entries)
        _unzip.receive_directory_into(self.zip, self.target, max_bytes, max_files)

    def assertRefusedAndClean(self, entries, words, max_bytes=10**6, max_files=100):
        e = self.assertRaises(Refused, self.receive, entries, max_bytes, max_files)
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
        """A file entry whose path goes through a link entry of the same
        archive is refused before anything is written, in either order."""
        self.assertRefusedAndClean([("d", b".", "link"), ("d/x", b"data")],
                                   "under a file or a link")
        self.assertRefusedAndClean([("d/x", b"data"), ("d", b".", "link")], "twice")

    def test_entry_under_a_file(self):
        """An entry below a file entry is refused."""
        self.assertRefusedAndClean([("f", b"1"), ("f/g", b"2")], "under a file")

    def test_link_chain_out(self):
        """The issue's chain: 'a/b -> ..' stays inside on its own, but a
        link through it ('c -> a/b/..', '..' of the target) climbs out; so
        do links to '/' and '/etc/passwd' built on it. Nothing is made."""
        self.assertRefusedAndClean([("a/b", b"..", "link"), ("c", b"a/b/..", "link")],
                                   "link out")
        self.assertRefusedAndClean([("a/b", b"..", "link"), ("a/c", b"b/../..", "link"),
                                    ("root", b"a/c/../../../../../..", "link")],
                                   "link out")
        self.assertRefusedAndClean([("a/b", b"..", "link"),
                                    ("p", b"a/b/a/b/../../etc/passwd", "link")], "link out")
        # each link climbs one level through the one before; lexically
        # every one of them stays inside
        self.assertRefusedAndClean([("a/b", b"..", "link"), ("a/l1", b"b/..", "link"),
                                    ("a/l2", b"l1/..", "link"),
                                    ("pw", b"a/l2/etc/passwd", "link")], "link out")

    def test_link_chain_inside(self):
        """Chains that stay inside are made as they are."""
        self.receive([("a/f", b"x"), ("a/b", b"..", "link"), ("c", b"a/b/a/f", "link")])
        self.assertEqual(os.readlink(os.path.join(self.target, "c")), "a/b/a/f")
        with open(os.path.join(self.target, "c"), "rb") as f:
            self.assertEqual(f.read(), b"x")

    def test_link_through_missing_folder(self):
        """A link through a folder the archive does not make is judged as
        if the folder existed: 'x -> nope/../..' is out."""
        self.assertRefusedAndClean([("x", b"nope/../..", "link")], "link out")

    def test_link_loop(self):
        """Links that point at each other are refused (bounded hops)."""
        self.assertRefusedAndClean([("a", b"b/x", "link"), ("b", b"a/y", "link")],
                                   "loop")

    def test_link_target_read_bounded(self):
        """A link entry whose data inflates to 64 MiB is refused from its
        header, and one that lies in its header is read no further than
        4097 bytes: memory stays small and the message short."""
        big = b"../" * (64 * 2**20 // 3)
        e = self.assertRefusedAndClean([("l", big, "link")], "longer than 4096 bytes")
        self.assertLess(len(str(e)), 200)
        make_zip(self.zip, [("l", big, "link")])
        with zipfile.ZipFile(self.zip) as zf:
            info = zf.infolist()[0]
            info.file_size = 10  # the header lies: reading stops there
            self.assertRaises(zipfile.BadZipFile, _unzip._link_target, zf, info)

    def test_link_backslash_or_empty(self):
        """Link targets with backslashes (read one way by us, another by
        the kernel), NUL or nothing are refused."""
        for target in (b"..\\..", b"", b"a\x00b", b"\xff"):
            self.assertRefusedAndClean([("l", target, "link")], "target")

    def test_empty_directories(self):
        """Folder entries make empty folders, also nested and repeated
        as parents of later entries."""
        self.receive([("e/", b""), ("f/g/", b""), ("f/h", b"1"), ("./", b"")])
        self.assertEqual(sorted(os.listdir(self.target)), ["e", "f"])
        self.assertEqual(os.listdir(os.path.join(self.target, "e")), [])
        self.assertEqual(sorted(os.listdir(os.path.join(self.target, "f"))), ["g", "h"])

    def test_only_stored_or_deflated(self):
        """bzip2 and lzma entries (which zipfile inflates without a bound
        per read) and encrypted entries are refused."""
        for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
            with zipfile.ZipFile(self.zip, "w", method) as zf:
                zf.writestr("a", b"x" * 100)
            e = self.assertRaises(Refused, _unzip.receive_directory_into, self.zip,
                                  self.target, 1000, 10)
            self.assertIn("only stored and deflated", str(e))
        make_zip(self.zip, [("a", b"x")])
        with zipfile.ZipFile(self.zip) as zf:
            info = zf.infolist()[0]
            info.flag_bits |= 1
            self.assertRaises(Refused, _unzip.plan, zf, 10, 10)

    def test_too_many_entries(self):
        """More entries than numfiles plus the allowance for folders are
        refused before anything is made."""
        self.patch(_unzip, "MAX_EXTRA_ENTRIES", 2)
        self.assertRefusedAndClean([("a", b""), ("b/", b""), ("c/", b""), ("d", b"")],
                                   "4 entries", max_files=1)
        self.receive([("a", b""), ("b/", b""), ("c/", b"")], max_files=1)

    def test_central_directory_checked_before_parsing(self):
        """A central directory larger than MAX_CENTRAL_RECORD bytes per
        allowed entry is refused from the end record, before zipfile
        builds its entry list (which is what takes the memory)."""
        self.patch(_unzip, "MAX_EXTRA_ENTRIES", 0)
        make_zip(self.zip, [(f"{i:03d}" + "n" * 400, b"") for i in range(3)])
        parsed = []
        self.patch(zipfile.ZipFile, "_RealGetContents",
                   lambda zf: parsed.append(zf))
        e = self.assertRaises(Refused, _unzip.receive_directory_into, self.zip,
                              self.target, 10, 2)
        self.assertIn("the zipfile's directory is", str(e))
        self.assertEqual(parsed, [])

    def test_bad_entry_names(self):
        """Components longer than 255 bytes, control characters and bidi
        overrides in entry names are refused; 255 bytes is fine."""
        self.assertRefusedAndClean([("d/" + "x" * 256, b"")], "256 bytes long")
        self.assertRefusedAndClean([("a\x1b[2Jb", b"")], "control character")
        self.assertRefusedAndClean([("photo\u202egpj.exe", b"")], "control character")
        self.receive([("é" * 127 + "x", b"ok")])
        self.assertEqual(os.listdir(self.target), ["é" * 127 + "x"])

    def test_damaged_zip(self):
        """A truncated or garbage zipfile is one Refused line, and nothing
        is left behind."""
        make_zip(self.zip, [("a", b"x" * 1000), ("b", b"y" * 1000)])
        with open(self.zip, "rb") as f:
            data = f.read()
        flipped = bytearray(data)
        flipped[33] ^= 0xff  # inside the first entry's deflated bytes
        for broken in (data[:len(data) // 2], b"PK\x05\x06" + b"\x00" * 17, b"junk",
                       bytes(flipped)):
            with open(self.zip, "wb") as f:
                f.write(broken)
            e = self.assertRaises(Refused, _unzip.receive_directory_into, self.zip,
                                  self.target, 10**6, 10)
            self.assertIn("damaged", str(e))
            self.assertEqual(sorted(os.listdir(self.base)), ["in.zip"])

    def test_headers_lie_about_sizes(self):
        """Bytes are counted as they are inflated, whatever the headers
        say: an entry claiming 1 byte but holding 5000 stops the unpack."""
        make_zip(self.zip, [("a", b"x" * 5000)])
        with zipfile.ZipFile(self.zip) as zf:
            info = zf.infolist()[0]
            info.file_size = 1
            entries = [(info, ("a",), _unzip._FILE)]
            os.makedirs(self.target)
            # zipfile stops at the header's size; the CRC then fails
            self.assertRaises(zipfile.BadZipFile, _unzip.unpack, zf, entries, self.target, 10)
        with open(os.path.join(self.target, "a"), "rb") as f:
            self.assertLessEqual(len(f.read()), 10)

    def test_more_than_announced(self):
        """Entries whose sizes add up to more than the offer's numbytes
        are refused (a zip bomb cannot fill the disk)."""
        self.assertRefusedAndClean([("a", b"x" * 600), ("b", b"y" * 600)],
                                   "more than the 1000 bytes", max_bytes=1000)

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
        self.assertRaises(Refused, _unzip.receive_directory_into, self.zip,
                          self.target, 100, 10)
        self.assertEqual(os.listdir(self.target), [])


class Names(unittest.TestCase):

    def test_target_path(self):
        """The target is the checked offered name inside the folder, or the
        user's own name (-o), or the offered name inside -o's folder."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(base, "sub"))
        self.assertEqual(_landing.target_path(base, "x.txt"), os.path.join(base, "x.txt"))
        self.assertEqual(_landing.target_path(base, "\x1b", "mine"), os.path.join(base, "mine"))
        self.assertEqual(_landing.target_path(base, "x.txt", "sub"),
                         os.path.join(base, "sub", "x.txt"))
        self.assertRaises(BadName, _landing.target_path, base, "../x.txt", "sub")

    def test_bad_names(self):
        """Empty, '.', '..', '/', '\\', NUL, missing names, names over 255
        bytes, control characters, bidi overrides and lone surrogates are
        refused, each with the one message of the rule."""
        for bad in ("", ".", "..", "a\x00b", "/", "../../x.txt", "C:\\a\\b", "d/", None, 7,
                    "x" * 256, "é" * 128, "a\nb", "a\x1b[31mb", "a\x9bb", "a\x07b",
                    "evil\u202etxt.exe", "a\u2066b", "a\ud800"):
            e = self.assertRaises(BadName, _landing.check_name, bad)
            self.assertTrue(str(e).startswith("the sender offered an unusable name '"), e)
            self.assertIsInstance(e, Refused)

    def test_paths(self):
        """A path is refused for any of its names, or when it is longer
        than MAX_PATH_BYTES, naming the whole path."""
        self.assertEqual(_landing.check_path(("a", "b")), ("a", "b"))
        e = self.assertRaises(BadName, _landing.check_path, ("a", "b\x1b[2J"))
        self.assertEqual(str(e), "the sender offered an unusable name 'a/b\x1b[2J': the name "
                                 "holds the control character '\\x1b'")
        deep = ("x" * 200,) * 21
        e = self.assertRaises(BadName, _landing.check_path, deep)
        self.assertIn(f"longer than {_landing.MAX_PATH_BYTES} bytes", str(e))

    def test_long_legal_names(self):
        """Every legal name, up to 255 bytes, is accepted, and its
        temporary name fits beside it (mkstemp, mkdtemp)."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        for name in ("x" * 229, "y" * 255, "é" * 127 + "z", "😀" * 63 + "abc"):
            self.assertEqual(_landing.check_name(name), name)
            p = _landing.PartialFile(os.path.join(base, name))
            p.write(b"1")
            p.finish()
            p.commit()
            self.assertTrue(os.path.isfile(os.path.join(base, name)))
        # a directory: its zipfile (NAME.zip) and its unpacking folder
        zip_path = os.path.join(base, "in.zip")
        make_zip(zip_path, [("f", b"2")])
        dirname = "d" * 255
        p = _landing.PartialFile(os.path.join(base, dirname + ".zip"))
        p.abort()
        _unzip.receive_directory_into(zip_path, os.path.join(base, dirname), 10, 10)
        self.assertEqual(os.listdir(os.path.join(base, dirname)), ["f"])

    def test_room(self):
        """check_room asks the injected free-space function about the
        target's directory."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        asked = []

        def free(path):
            asked.append(path)
            return 100
        _landing.check_room(free, os.path.join(base, "f"), 100)
        self.assertRaises(Refused, _landing.check_room, free, os.path.join(base, "f"), 101)
        self.assertEqual(asked, [base, base])

    def test_unwritable_or_missing_directory(self):
        """A target directory that is missing or not writable is refused
        before anything is accepted."""
        base = os.path.abspath(self.mktemp())
        e = self.assertRaises(Refused, _landing.check_room, lambda p: 10**9,
                              os.path.join(base, "f"), 1)
        self.assertIn("no such directory", str(e))
        os.makedirs(base)
        self.patch(os, "access", lambda path, mode: False)
        e = self.assertRaises(Refused, _landing.check_room, lambda p: 10**9,
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
        p = _landing.PartialFile(self.target)
        p.write(b"abc")
        self.assertFalse(os.path.exists(self.target))
        self.assertTrue(os.path.basename(p.path).startswith(_landing.PARTIAL_PREFIX))
        self.assertEqual(p.finish(), hashlib.sha256(b"abc").hexdigest())
        p.commit()
        self.assertEqual(os.listdir(self.base), ["f.bin"])

    def test_finish_fsyncs_before_returning(self):
        """finish() flushes and fsyncs the temporary file (so the rename
        that follows never names bytes still in flight) and returns the
        sha256 of the bytes as they were written."""
        p = _landing.PartialFile(self.target)
        p.write(b"ab")
        p.write(b"c")
        synced = []
        real_fsync = os.fsync

        def fsync(fd):
            with open(p.path, "rb") as f:
                synced.append(f.read())
            real_fsync(fd)
        self.patch(_landing._partial.os, "fsync", fsync)
        self.assertEqual(p.finish(), hashlib.sha256(b"abc").hexdigest())
        self.assertEqual(synced, [b"abc"])

    def test_commit_never_replaces(self):
        """A file that appeared under the final name meanwhile is kept."""
        p = _landing.PartialFile(self.target)
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
        p = _landing.PartialFile(self.target)
        p.write(b"abc")
        p.abort()
        self.assertEqual(os.listdir(self.base), [])
