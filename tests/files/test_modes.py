"""A directory's file modes survive a classic transfer (issue 22 item 5):
a tree of 0755, 0644, 0600 and 0700 files arrives with the same modes
ours -> ours, ours -> reference 0.24 and reference 0.24 -> ours (the
zipfile's external attributes carry them; the receiver keeps the
permission bits, never more than its umask allows: 022 here, which
takes nothing from these modes). Relay only (``--no-listen``), through
our relay on 127.0.0.1."""
import os
import stat

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s

MODES = {"run.sh": 0o755, "doc.txt": 0o644, "sub/secret.key": 0o600,
         "sub/deeper/tool": 0o700}


def make_moded_tree(root):
    for rel, mode in MODES.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(rel.encode() * 100)
        os.chmod(path, mode)
    return root


def modes_of(root):
    """{relative path: permission bits} of every file under ``root``."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            out[rel] = stat.S_IMODE(os.lstat(path).st_mode)
    return out


class Modes(unittest.TestCase):
    timeout = 180

    def setUp(self):
        # the receivers (our children) inherit it
        old = os.umask(0o022)
        self.addCleanup(os.umask, old)

    @defer.inlineCallbacks
    def run_tree(self, sender, receiver):
        servers = yield s.Servers.start(self, relay="ours")
        src = os.path.abspath(self.mktemp())
        tree = make_moded_tree(os.path.join(src, "moded"))
        self.assertEqual(modes_of(tree), MODES)
        send, recv, out = yield s.transfer(self, servers, sender, receiver, tree,
                                           no_listen=True)
        s.assert_ok(self, send, recv)
        self.assertEqual(modes_of(os.path.join(out, "moded")), MODES)

    def test_ours_to_ours(self):
        """Our sender, our receiver (--classic): every mode kept."""
        return self.run_tree("ours", "ours")

    def test_ours_to_reference(self):
        """Our zipfile carries the modes the reference restores."""
        return self.run_tree("ours", "ref")

    def test_reference_to_ours(self):
        """The reference's zipfile's modes are kept by our receiver."""
        return self.run_tree("ref", "ours")
