"""The ``wormhole.transfer`` library API itself, with no CLI of ours: an
application in this process sends a file and a directory to the
reference 0.24's ``wormhole receive``, and receives a file, a directory
and a text from its ``wormhole send`` (docs/transfer.md).

Relay only (``--no-listen`` for the reference, ``no_listen`` for us):
neither side offers a direct hint, so nothing dials anything but the
Mailbox server and our Transit relay on 127.0.0.1 (root namespace; the
reference is a subprocess killed by PID in cleanup)."""
import os
import tempfile

from twisted.internet import defer, reactor
from twisted.trial import unittest

import wormhole
from wormhole import transfer
from wormhole.transit import TransitReceiver, TransitSender

from . import _support as s

# the CLI's appid: the reference's `wormhole` commands use it
APPID = "lothar.com/wormhole/text-or-file-xfer"
_ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONUNBUFFERED": "1"}


class LibraryWithReference(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        self.servers = yield s.Servers.start(self, relay="ours")
        self.code_number = 700

    def wormhole_with_code(self):
        """Our wormhole (the application's), its code set."""
        self.code_number += 1
        code = f"{self.code_number}-library-api"
        w = wormhole.create(APPID, self.servers.url, reactor)
        w.set_code(code)
        return w, code

    def reference(self, command, *args, cwd):
        argv = s.ref_argv(self.servers, command, "--hide-progress", "--no-listen", *args)
        return s.spawn(self, argv, f"reference {command}", env=_ENV, cwd=cwd)

    def folder(self):
        path = os.path.abspath(self.mktemp())
        os.makedirs(path)
        return path

    @defer.inlineCallbacks
    def send_to_reference(self, path):
        """``send_file(path)`` to a reference receiver; returns (Sent,
        the folder it received into)."""
        out = self.folder()
        w, code = self.wormhole_with_code()
        peer = self.reference("receive", "--accept-file", code, cwd=out)
        moved = []
        try:
            sent = yield transfer.send_file(
                reactor, w, APPID, path,
                transit=TransitSender(self.servers.transit, no_listen=True, reactor=reactor),
                progress=moved.append)
        finally:
            yield w.close()
        status = yield peer.ended
        self.assertEqual(status, 0, peer.describe())
        self.assertEqual(sum(moved), sent.size)
        self.assertIn("relay", sent.via)
        return sent, out

    @defer.inlineCallbacks
    def receive_from_reference(self, *send_args, policy=None):
        """``receive()`` what a reference sender sends; returns Received."""
        w, code = self.wormhole_with_code()
        peer = self.reference("send", "--code", code, *send_args, cwd=self.src)
        try:
            got = yield transfer.receive(
                reactor, w, APPID, policy,
                transit=lambda: TransitReceiver(self.servers.transit, no_listen=True,
                                                reactor=reactor))
        finally:
            yield w.close()
        status = yield peer.ended
        self.assertEqual(status, 0, peer.describe())
        return got

    @defer.inlineCallbacks
    def test_send_file_to_reference(self):
        """A file sent with ``send_file`` arrives whole at the reference;
        ``Sent`` carries the sha256 it confirmed."""
        path = os.path.join(self.folder(), "payload ✓.bin")
        digest = s.write_file(path, 300 * 1000 + 7)
        sent, out = yield self.send_to_reference(path)
        self.assertEqual((sent.kind, sent.size, sent.sha256), ("file", 300007, digest))
        self.assertEqual(os.listdir(out), ["payload ✓.bin"])
        self.assertEqual(s.sha256_of(os.path.join(out, "payload ✓.bin")), digest)

    @defer.inlineCallbacks
    def test_send_directory_to_reference(self):
        """A directory given by its path is zipped, sent, unpacked by the
        reference into the same tree; the temporary zipfile is gone."""
        tree = s.make_tree(os.path.join(self.folder(), "tree ü"), empty_dir=True)
        temporary = self.folder()
        self.patch(tempfile, "tempdir", temporary)  # where the zipfile is built
        sent, out = yield self.send_to_reference(tree)
        self.assertEqual(os.listdir(temporary), [])
        self.assertEqual(sent.kind, "directory")
        self.assertEqual(os.listdir(out), ["tree ü"])
        self.assertEqual(s.tree_of(os.path.join(out, "tree ü")), s.tree_of(tree))

    @defer.inlineCallbacks
    def test_receive_file_and_directory_from_reference(self):
        """``receive`` writes what the reference sends into the policy's
        folder: a file, then a directory (its tree intact)."""
        self.src = self.folder()
        digest = s.write_file(os.path.join(self.src, "f.bin"), 70000)
        s.make_tree(os.path.join(self.src, "tree"))
        out = self.folder()
        offers = []

        def accept(offer):
            offers.append(offer)
            return True
        policy = transfer.ReceivePolicy(folder=out, accept=accept)
        got = yield self.receive_from_reference("f.bin", policy=policy)
        self.assertEqual((got.kind, got.path, got.size, got.sha256),
                         ("file", os.path.join(out, "f.bin"), 70000, digest))
        got = yield self.receive_from_reference("tree", policy=policy)
        self.assertEqual((got.kind, got.path), ("directory", os.path.join(out, "tree")))
        self.assertEqual(s.tree_of(got.path), s.tree_of(os.path.join(self.src, "tree")))
        self.assertEqual([(o.kind, o.name) for o in offers],
                         [("file", "f.bin"), ("directory", "tree")])
        self.assertEqual(sorted(os.listdir(out)), ["f.bin", "tree"])

    @defer.inlineCallbacks
    def test_receive_text_from_reference(self):
        """A text needs no Transit: ``Received.text``."""
        self.src = self.folder()
        got = yield self.receive_from_reference("--text", "hello ✓")
        self.assertEqual((got.kind, got.text), ("text", "hello ✓"))

    @defer.inlineCallbacks
    def test_refused_by_policy(self):
        """An offer over the policy's ``max_bytes`` is refused before
        anything moves: ``DeclinedOffer`` here, and the reference sender
        hears "transfer rejected" and fails."""
        self.src = self.folder()
        s.write_file(os.path.join(self.src, "big.bin"), 5000)
        out = self.folder()
        w, code = self.wormhole_with_code()
        peer = self.reference("send", "--code", code, "big.bin", cwd=self.src)
        try:
            d = transfer.receive(reactor, w, APPID,
                                 transfer.ReceivePolicy(folder=out, max_bytes=4999))
            yield self.assertFailure(d, transfer.DeclinedOffer)
        finally:
            yield w.close()
        status = yield peer.ended
        self.assertNotEqual(status, 0)
        self.assertIn(b"transfer rejected", peer.stderr)
        self.assertEqual(os.listdir(out), [])
