"""The one rule for a received file's or folder's mode
(docs/security.md "Modes"): the sender's permission bits, never set-uid,
set-gid or sticky, less the receiver's umask; the default less the umask
when the sender gave none; a mode that is not an integer is refused."""
import os
import stat

from twisted.trial import unittest

from wormhole import _landing


class LandedMode(unittest.TestCase):

    def umask(self, mask):
        old = os.umask(mask)
        self.addCleanup(os.umask, old)

    def test_sender_bits_kept(self):
        self.umask(0o022)
        for mode in (0o755, 0o644, 0o600, 0o700, 0o444, 0o000):
            self.assertEqual(_landing.landed_mode(mode, 0o666), mode)

    def test_special_bits_dropped(self):
        self.umask(0o022)
        self.assertEqual(_landing.landed_mode(0o4755, 0o666), 0o755)
        self.assertEqual(_landing.landed_mode(0o2750, 0o666), 0o750)
        self.assertEqual(_landing.landed_mode(0o1777, 0o777), 0o755)
        self.assertEqual(_landing.landed_mode(0o7777, 0o666), 0o755)
        # a whole st_mode (file type above the bits) is cleaned the same way
        self.assertEqual(_landing.landed_mode(stat.S_IFREG | 0o4711, 0o666), 0o711)

    def test_umask_limits(self):
        self.umask(0o077)
        self.assertEqual(_landing.landed_mode(0o755, 0o666), 0o700)
        self.assertEqual(_landing.landed_mode(0o666, 0o666), 0o600)

    def test_no_mode_is_the_default(self):
        self.umask(0o027)
        self.assertEqual(_landing.landed_mode(None, 0o666), 0o640)
        self.assertEqual(_landing.landed_mode(None, 0o777), 0o750)

    def test_not_an_integer_is_a_bad_offer(self):
        for bad in ("755", 7.5, True, -1, [0o755]):
            e = self.assertRaises(_landing.BadOffer, _landing.landed_mode, bad, 0o666)
            self.assertIn("file mode", str(e))


class PartialFileMode(unittest.TestCase):

    def test_committed_with_the_landed_mode(self):
        old = os.umask(0o022)
        self.addCleanup(os.umask, old)
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        for name, mode, expected in (("plain", None, 0o644), ("tool", 0o4755, 0o755),
                                     ("key", 0o600, 0o600)):
            p = _landing.PartialFile(os.path.join(folder, name), mode=mode)
            p.write(b"data")
            p.commit()
            self.assertEqual(stat.S_IMODE(os.stat(p.target).st_mode), expected, name)
