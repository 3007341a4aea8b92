"""Directories with empty folders between whole CLIs
(docs/cli.md, "Interoperability (tests/files)"): ours and the reference
0.24 both ways, ours to wormhole-william 1.0.6; every tree compared
exactly (files with their sha256, empty folders as such). wormhole-william
makes an empty file of each empty folder (its unzip's limit, the same with
the reference's zipfile): there the files are compared exactly and each
folder is expected as an empty file. The peers advertise every interface
address, so everything runs in a loopback-only network namespace
(tests/files/_support.py)."""
import hashlib
import os

from twisted.internet import defer
from twisted.trial import unittest

from ..files import _support as s

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def tree_with_empty_folders(testcase):
    src = os.path.abspath(testcase.mktemp())
    tree = s.make_tree(os.path.join(src, "tree ü"), empty_dir=True)
    os.makedirs(os.path.join(tree, "a", "b", "empty too"))
    os.makedirs(os.path.join(tree, "sub", "deeper", "empty beside files"))
    return tree


class WithReference(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        self.ns = s.Namespace.create(self)
        self.servers = yield s.Servers.start(self, ns=self.ns)

    @defer.inlineCallbacks
    def run_tree(self, sender, receiver):
        tree = tree_with_empty_folders(self)
        send, recv, out = yield s.transfer(self, self.servers, sender, receiver, tree,
                                           ns=self.ns)
        s.assert_ok(self, send, recv)
        got = s.tree_of(os.path.join(out, "tree ü"))
        self.assertEqual(got, s.tree_of(tree))
        self.assertIn("a/b/empty too/", got)
        self.assertIn("empty-folder/", got)

    def test_ours_to_reference(self):
        """Our zipfile's empty folders are recreated by the reference."""
        return self.run_tree("ours", "ref")

    def test_reference_to_ours(self):
        """The reference's empty folders are recreated by our receiver."""
        return self.run_tree("ref", "ours")


class ToWormholeWilliam(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        s.wormhole_william()  # fail early, with the installation hint
        self.ns = s.Namespace.create(self, hosts=[s.PUBLIC_TRANSIT_HOST])
        self.servers = yield s.Servers.start(self, ns=self.ns, relay="ours",
                                             relay_port=s.PUBLIC_TRANSIT_PORT)

    @defer.inlineCallbacks
    def run_tree(self, sender):
        tree = tree_with_empty_folders(self)
        send, recv, out = yield s.transfer(self, self.servers, sender, "ww", tree,
                                           ns=self.ns)
        s.assert_ok(self, send, recv)
        # wormhole-william 1.0.6 creates a file for every zip entry, a
        # folder entry ("empty-folder/") included: each empty folder
        # arrives as an empty file of its name, every file exactly
        # (docs/cli.md, "What a directory's zipfile holds")
        expected = {(k[:-1] if v == "<dir>" else k):
                    (EMPTY_SHA256 if v == "<dir>" else v)
                    for k, v in s.tree_of(tree).items()}
        self.assertEqual(s.tree_of(os.path.join(out, "tree ü")), expected)

    def test_ours_to_william(self):
        """Our tree arrives at wormhole-william with every file exact and
        each empty folder as an empty file (its unzip's limit)."""
        return self.run_tree("ours")

    def test_reference_to_william(self):
        """The reference's zipfile of the same tree gives wormhole-william
        the same result: ours is no worse for it than the reference."""
        return self.run_tree("ref")
