"""Our CLI and the reference CLI (magic-wormhole 0.24) transfer files and
directories both ways: direct (everything in a loopback-only network
namespace: the reference advertises every interface address), and
relay-only (--no-listen on both sides) through our Transit relay and
through the reference relay (magic-wormhole-transit-relay 0.5). Small
files, plus one 50 MB file direct."""
import os

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s

SMALL = 300 * 1000 + 7


class _Transfers:
    """Mixin: ``servers()`` and ``no_listen``/``ns`` say how to run."""

    timeout = 180
    ns = None
    no_listen = False

    @defer.inlineCallbacks
    def run_file(self, sender, receiver, size=SMALL):
        servers = yield self.servers()
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        path = os.path.join(src, "payload ✓.bin")
        digest = s.write_file(path, size)
        send, recv, out = yield s.transfer(self, servers, sender, receiver, path,
                                           ns=self.ns, no_listen=self.no_listen)
        s.assert_ok(self, send, recv)
        self.assertEqual(os.listdir(out), ["payload ✓.bin"])
        self.assertEqual(s.sha256_of(os.path.join(out, "payload ✓.bin")), digest)
        self.check_path(send, recv)

    @defer.inlineCallbacks
    def run_directory(self, sender, receiver):
        servers = yield self.servers()
        src = os.path.abspath(self.mktemp())
        tree = s.make_tree(os.path.join(src, "tree ü"))
        send, recv, out = yield s.transfer(self, servers, sender, receiver, tree,
                                           ns=self.ns, no_listen=self.no_listen)
        s.assert_ok(self, send, recv)
        self.assertEqual(os.listdir(out), ["tree ü"])
        self.assertEqual(s.tree_of(os.path.join(out, "tree ü")), s.tree_of(tree))
        self.check_path(send, recv)

    def check_path(self, send, recv):
        for run in (send, recv):
            line = s.connection_line(run)
            self.assertIsNotNone(line, run.describe())
            self.assertEqual("relay" in line, self.no_listen, run.describe())

    def test_file_ours_to_reference(self):
        """Our sender, the reference receiver: the file arrives whole."""
        return self.run_file("ours", "ref")

    def test_file_reference_to_ours(self):
        """The reference sender, our receiver: the file arrives whole."""
        return self.run_file("ref", "ours")

    def test_directory_ours_to_reference(self):
        """Our zipfile unpacks at the reference into the same tree."""
        return self.run_directory("ours", "ref")

    def test_directory_reference_to_ours(self):
        """The reference's zipfile unpacks here into the same tree."""
        return self.run_directory("ref", "ours")


class Direct(_Transfers, unittest.TestCase):
    """Both sides listen; all processes in one loopback-only namespace."""

    @defer.inlineCallbacks
    def servers(self):
        self.ns = s.Namespace.create(self)
        servers = yield s.Servers.start(self, ns=self.ns)
        return servers

    def test_big_file_reference_to_ours(self):
        """50 MB from the reference to us, direct."""
        return self.run_file("ref", "ours", size=50 * 1000 * 1000)


class RelayOnlyOurRelay(_Transfers, unittest.TestCase):
    """--no-listen on both sides: through our relay (root namespace: no
    direct hints are offered, so nothing dials a non-loopback address)."""
    no_listen = True

    def servers(self):
        return s.Servers.start(self, relay="ours")

    @defer.inlineCallbacks
    def test_same_stdout(self):
        """A file with the receiver asking: both receivers print exactly
        'ok? (Y/n): ' on stdout, both senders the consumed-code note, in
        both directions."""
        servers = yield self.servers()
        outputs = {}
        for sender, receiver in (("ours", "ref"), ("ref", "ours")):
            src = os.path.abspath(self.mktemp())
            os.makedirs(src)
            path = os.path.join(src, "f.txt")
            s.write_file(path, 1000)
            send, recv, out = yield s.transfer(self, servers, sender, receiver, path,
                                               no_listen=True, ask=True)
            s.assert_ok(self, send, recv)
            self.assertEqual(os.listdir(out), ["f.txt"])
            outputs[sender] = send.stdout
            outputs[receiver + " receiving"] = recv.stdout
        self.assertEqual(outputs["ours receiving"], b"ok? (Y/n): ")
        self.assertEqual(outputs["ref receiving"], outputs["ours receiving"])
        self.assertEqual(outputs["ours"], outputs["ref"])
        self.assertEqual(outputs["ours"],
                         b"Note: code has been consumed and can no longer be used.\n")

    def test_empty_file_ours_to_reference(self):
        """An empty file: no records at all, then the ack of the empty hash."""
        return self.run_file("ours", "ref", size=0)

    def test_empty_file_reference_to_ours(self):
        """An empty file from the reference."""
        return self.run_file("ref", "ours", size=0)


class RelayOnlyReferenceRelay(_Transfers, unittest.TestCase):
    """--no-listen on both sides: through the reference relay 0.5."""
    no_listen = True

    def servers(self):
        return s.Servers.start(self, relay="ref")
