"""One walk of a directory for both protocols (``wormhole._outgoing_tree``):
classic's zipfile and transfer-v2's DirectoryOffer send the same files
under the same names, follow the same links, and refuse the same things
(a loop, a FIFO, a dangling link), which transfer-v2 reports instead of
leaving out in silence."""
import os
import zipfile

from twisted.trial import unittest

from wormhole import transfer, transfer_v2
from wormhole._outgoing_tree import walk


def tree(test):
    """A folder holding a file, a sub-folder, a link to a folder outside
    it, a link to a file, an empty folder, a loop, a FIFO and a dangling
    link. Returns (the folder, the names both protocols must send)."""
    base = os.path.abspath(test.mktemp())
    root = os.path.join(base, "root")
    outside = os.path.join(base, "outside")
    for d in (os.path.join(root, "sub"), os.path.join(root, "empty"), outside):
        os.makedirs(d)
    for path, data in ((os.path.join(root, "a.txt"), b"a"),
                       (os.path.join(root, "sub", "b.txt"), b"bb"),
                       (os.path.join(outside, "c.txt"), b"ccc")):
        with open(path, "wb") as f:
            f.write(data)
    os.symlink(outside, os.path.join(root, "linked"))
    os.symlink(os.path.join(root, "a.txt"), os.path.join(root, "a-link.txt"))
    os.symlink(root, os.path.join(root, "sub", "loop"))
    os.mkfifo(os.path.join(root, "pipe"))
    os.symlink(os.path.join(base, "nowhere"), os.path.join(root, "dangling"))
    sent = {"a.txt", "a-link.txt", "sub/b.txt", "linked/c.txt"}
    return root, sent


class OneWalk(unittest.TestCase):

    def test_what_is_refused_and_why(self):
        root, _ = tree(self)
        refused = []
        entries = list(walk(root, lambda local, why: refused.append((local, why))))
        self.assertEqual(refused, [(os.path.join(root, "sub", "loop"),
                                    "a link to a directory that is already being sent (a loop)")])
        folders = {"/".join(e.segments): e.holds_nothing for e in entries if e.is_dir}
        self.assertEqual(folders, {"empty": True, "linked": False, "sub": False})

    def test_transfer_v2_sends_what_classic_sends(self):
        root, sent = tree(self)
        outgoing = transfer_v2.prepare_offer(root)
        self.assertEqual({"/".join(f.segments) for f in outgoing.files}, sent)
        skipped = dict(outgoing.skipped)
        self.assertEqual(set(skipped), {os.path.join(root, n)
                                        for n in ("sub/loop", "pipe", "dangling")})
        self.assertEqual(skipped[os.path.join(root, "pipe")], "not a regular file (a FIFO)")

        warnings = []
        classic = transfer.prepare(root, ignore_unsendable=True, warn=warnings.append)
        self.addCleanup(classic.cleanup)
        with zipfile.ZipFile(classic.path) as zf:
            names = {n for n in zf.namelist() if not n.endswith("/")}
            self.assertIn("empty/", zf.namelist())
        self.assertEqual(names, sent)
        self.assertEqual(len(warnings), 3)
        for path, why in skipped.items():
            self.assertIn(f"{path}: {why} (skipped)", warnings)

    def test_classic_stops_where_it_is_not_told_to_skip(self):
        root, _ = tree(self)
        with self.assertRaises(transfer.Unsendable) as cm:
            transfer.prepare(root)
        # the first refusal in the walk's order (root's names, sorted)
        self.assertEqual(str(cm.exception),
                         f"Cannot send {os.path.join(root, 'dangling')}: No such file or directory")
