"""The one way the receiving rules touch a hidden file
(wormhole._landing._nofollow): a link planted under the name is never
followed, whatever the operation; a FIFO is never waited on."""
import errno
import os

from twisted.trial import unittest

from wormhole._landing import Refused, _nofollow

from ..hostile._outside import Outside


class NoFollow(unittest.TestCase):
    def setUp(self):
        self.inside = os.path.abspath(self.mktemp())
        os.makedirs(self.inside)
        self._outside = Outside(self)
        self.outside = self._outside.path
        self.victim = self._outside.victim
        self.link = os.path.join(self.inside, "hidden")
        os.symlink(self.victim, self.link)

    def assertVictimUntouched(self):
        self.assertEqual(self._outside.snapshot(), self._outside.before)

    def test_create_refuses_any_existing_name(self):
        """A new file is never made over a name: a link, dangling or not."""
        self.assertRaises(FileExistsError, _nofollow.create, self.link)
        self.assertRaises(FileExistsError, _nofollow.create_file, self.link)
        dangling = os.path.join(self.inside, "dangling")
        os.symlink(os.path.join(self.outside, "new"), dangling)
        self.assertRaises(FileExistsError, _nofollow.create, dangling)
        self.assertVictimUntouched()

    def test_reopen_append_read_refuse_a_link(self):
        """Continuing, appending, reading back: ELOOP on a link."""
        for call in (lambda: _nofollow.reopen(self.link),
                     lambda: _nofollow.open_or_create(self.link),
                     lambda: _nofollow.read(self.link, 100),
                     lambda: _nofollow.append(self.link, b"more")):
            e = self.assertRaises(OSError, call)
            self.assertEqual(e.errno, errno.ELOOP)
        self.assertVictimUntouched()

    def test_fifo_refused_without_waiting(self):
        """A FIFO under the name: refused at once (nobody writes to it)."""
        fifo = os.path.join(self.inside, "fifo")
        os.mkfifo(fifo)
        self.assertRaises(Refused, _nofollow.read, fifo, 100)
        self.assertRaises(Refused, _nofollow.reopen, fifo)

    def test_replace_removes_a_stale_temporary(self):
        """A link at the temporary name is removed, not written through;
        a link at the name itself is replaced, not followed."""
        target = os.path.join(self.inside, "state")
        os.symlink(self.victim, target)
        _nofollow.replace(target, b"ours", self.link)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"ours")
        self.assertFalse(os.path.islink(target))
        self.assertFalse(os.path.lexists(self.link))
        self.assertVictimUntouched()

    def test_remove_takes_the_link_only(self):
        """Removing a link (to a file or a folder) leaves what it points at."""
        folder_link = os.path.join(self.inside, "folder")
        os.symlink(self.outside, folder_link)
        _nofollow.remove(self.link)
        _nofollow.remove(folder_link)
        _nofollow.remove(os.path.join(self.inside, "nothing"))
        self.assertEqual(os.listdir(self.inside), [])
        self.assertVictimUntouched()

    def test_folders(self):
        """Folders inside a received folder are made refusing a link on
        the way; a folder's mode is set through its descriptor."""
        os.symlink(self.outside, os.path.join(self.inside, "sub"))
        e = self.assertRaises(OSError, _nofollow.makedirs_inside, self.inside, ("sub", "x"))
        self.assertEqual(e.errno, errno.ELOOP)
        before = os.stat(self.outside).st_mode
        self.assertRaises(OSError, _nofollow.set_folder_mode, os.path.join(self.inside, "sub"),
                          0o701)
        self.assertEqual(os.stat(self.outside).st_mode, before)
        made = _nofollow.makedirs_inside(self.inside, ("a", "b"))
        self.assertTrue(_nofollow.is_real_folder(made))
        self.assertFalse(_nofollow.is_real_folder(os.path.join(self.inside, "sub")))
        self.assertEqual(os.listdir(self.outside), ["victim"])
