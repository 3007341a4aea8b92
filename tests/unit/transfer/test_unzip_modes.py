"""File modes in a received directory
(docs/security.md, "Modes (`wormhole._landing.landed_mode`)";
File-transfer protocol, "Sender": the zipfile's external attributes carry
the sender's ``st_mode``): the permission bits the sender had, never
set-uid, set-gid or sticky, never more than the receiver's umask allows;
an entry without a mode gets what ``open()``/``mkdir()`` give (0666/0777
less the umask)."""
import os
import stat
import zipfile

from twisted.trial import unittest

from wormhole.transfer import _unzip


def _entry(name, mode, data=b"x"):
    info = zipfile.ZipInfo(name)
    if mode is not None:
        kind = stat.S_IFDIR if name.endswith("/") else stat.S_IFREG
        info.external_attr = (kind | mode) << 16
    return info, data


class Modes(unittest.TestCase):

    def setUp(self):
        self.base = os.path.abspath(self.mktemp())
        os.makedirs(self.base)
        self.zip = os.path.join(self.base, "in.zip")
        self.target = os.path.join(self.base, "out")

    def receive(self, entries, umask=0o022):
        with zipfile.ZipFile(self.zip, "w") as zf:
            for info, data in entries:
                carried = info.external_attr
                zf.writestr(info, data)
                # zipfile gives an entry without one 0600: undo that (the
                # central directory is written from these at close)
                info.external_attr = carried
        old = os.umask(umask)
        try:
            _unzip.receive_directory_into(self.zip, self.target, 10**6, 100)
        finally:
            os.umask(old)

    def mode(self, *parts):
        return stat.S_IMODE(os.lstat(os.path.join(self.target, *parts)).st_mode)

    def test_permission_bits_kept(self):
        """0755, 0644, 0600 and 0700 files, a read-only file, and a 0700
        and a read-only (0500) empty folder keep their modes."""
        self.receive([_entry("run.sh", 0o755), _entry("doc.txt", 0o644),
                      _entry("sub/secret", 0o600), _entry("sub/tool", 0o700),
                      _entry("ro.txt", 0o444), _entry("private/", 0o700),
                      _entry("locked/", 0o500)])
        self.assertEqual([self.mode("run.sh"), self.mode("doc.txt"),
                          self.mode("sub", "secret"), self.mode("sub", "tool"),
                          self.mode("ro.txt"), self.mode("private"), self.mode("locked")],
                         [0o755, 0o644, 0o600, 0o700, 0o444, 0o700, 0o500])
        self.addCleanup(os.chmod, os.path.join(self.target, "locked"), 0o700)

    def test_never_setuid_setgid_sticky(self):
        """The set-uid, set-gid and sticky bits of an entry are dropped."""
        self.receive([_entry("suid", 0o4755), _entry("sgid", 0o2755),
                      _entry("tmp/", 0o1777)])
        self.assertEqual([self.mode("suid"), self.mode("sgid"), self.mode("tmp")],
                         [0o755, 0o755, 0o755])

    def test_umask_limits(self):
        """The receiver's umask takes away what it forbids: with 077 a
        0755 file arrives 0700, a 0777 folder 0700."""
        self.receive([_entry("run.sh", 0o755), _entry("open/", 0o777)], umask=0o077)
        self.assertEqual([self.mode("run.sh"), self.mode("open")], [0o700, 0o700])

    def test_no_mode_gets_the_default(self):
        """An entry that carries no mode (a zipfile made elsewhere) gets
        0666 or 0777 less the umask, as before."""
        self.receive([_entry("plain", None), _entry("dir/", None)])
        self.assertEqual([self.mode("plain"), self.mode("dir")], [0o644, 0o755])


class ZipfilePrivates(unittest.TestCase):
    def test_this_python_has_the_end_record_reader(self):
        """check_directory_size bounds the central directory before zipfile
        parses it through zipfile's private _EndRecData and _ECD_SIZE; on a
        Python that drops them the bound is skipped, and this fails."""
        found = _unzip.end_record_reader()
        self.assertIsNotNone(found, "zipfile has no _EndRecData/_ECD_SIZE any more: "
                             "_unzip.check_directory_size no longer bounds the directory")
        path = self.mktemp()
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("a", b"x" * 10)
            zf.writestr("b", b"y")
        end_record, size_field = found
        with open(path, "rb") as f:
            end = end_record(f)
        # two central records: 46 bytes each plus the names
        self.assertEqual(end[size_field], 2 * (46 + 1))

    def test_without_it_the_check_is_skipped(self):
        """A directory over the bound is refused before parsing; the
        fallback, planted (no reader), lets zipfile parse it."""
        self.patch(_unzip, "MAX_EXTRA_ENTRIES", 0)
        path = self.mktemp()
        with zipfile.ZipFile(path, "w") as zf:
            for i in range(50):
                zf.writestr(str(i), b"")
        self.assertRaises(_unzip.Refused, _unzip.check_directory_size, path, 2)
        self.patch(_unzip, "end_record_reader", lambda: None)
        self.assertIsNone(_unzip.check_directory_size(path, 2))
