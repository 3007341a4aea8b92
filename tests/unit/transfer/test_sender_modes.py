"""What our classic sender writes of a directory's modes
(docs/security.md, "Modes (`wormhole._landing.landed_mode`)"): each
entry's external attributes carry its file type and permission bits
(``st_mode << 16``, where the reference 0.24 and we read them), and never
set-uid, set-gid or sticky, which the reference's receiver would apply as
they are."""
import os
import stat
import zipfile

from twisted.trial import unittest

from wormhole.transfer import _outgoing

MODES = {"run.sh": 0o755, "doc.txt": 0o644, "secret.key": 0o600, "tool": 0o700,
         "setuid": 0o4755, "setgid": 0o2750, "odd": 0o7777}


class SenderModes(unittest.TestCase):

    def setUp(self):
        self.root = os.path.join(os.path.abspath(self.mktemp()), "tree")
        os.makedirs(os.path.join(self.root, "empty"))
        os.chmod(os.path.join(self.root, "empty"), 0o1750)  # sticky, dropped too
        for name, mode in MODES.items():
            path = os.path.join(self.root, name)
            with open(path, "wb") as f:
                f.write(name.encode())
            os.chmod(path, mode)

    def entries(self):
        outgoing = _outgoing.prepare(self.root, tmpdir=os.path.dirname(self.root))
        self.addCleanup(outgoing.cleanup)
        with zipfile.ZipFile(outgoing.path) as zf:
            return {i.filename: i.external_attr for i in zf.infolist()}

    def test_permission_bits_only(self):
        entries = self.entries()
        for name, mode in MODES.items():
            st_mode = entries[name] >> 16
            self.assertTrue(stat.S_ISREG(st_mode), name)
            self.assertEqual(stat.S_IMODE(st_mode), mode & 0o777, name)

    def test_empty_folder_entry(self):
        attributes = self.entries()["empty/"]
        self.assertTrue(stat.S_ISDIR(attributes >> 16))
        self.assertEqual(stat.S_IMODE(attributes >> 16), 0o750)
        self.assertEqual(attributes & 0x10, 0x10)  # MS-DOS's directory bit
