"""Our CLI to our CLI over loopback with the project's own Mailbox server
and Transit relay: text, a 50 MB file and a directory (nested folders,
empty files, non-ASCII names), direct and relay-only
(--no-listen on both sides); the sha256 and the tree are compared."""
import os

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s

BIG = 50 * 1000 * 1000


class OursToOurs(unittest.TestCase):
    timeout = 180

    @defer.inlineCallbacks
    def setUp(self):
        self.servers = yield s.Servers.start(self)
        self.src = os.path.abspath(self.mktemp())
        os.makedirs(self.src)

    @defer.inlineCallbacks
    def big_file(self, no_listen):
        path = os.path.join(self.src, "big file.bin")
        digest = s.write_file(path, BIG)
        send, recv, out = yield s.transfer(self, self.servers, "ours", "ours", path,
                                           no_listen=no_listen)
        s.assert_ok(self, send, recv)
        self.assertEqual(os.listdir(out), ["big file.bin"])
        self.assertEqual(s.sha256_of(os.path.join(out, "big file.bin")), digest)
        self.assertIn(b"Confirmation received. Transfer complete.", send.stderr)
        return send, recv

    @defer.inlineCallbacks
    def test_big_file_direct(self):
        """50 MB, both sides listening on 127.0.0.1: a direct connection
        (no relay in the connection line), the same sha256 on arrival."""
        send, recv = yield self.big_file(no_listen=False)
        self.assertNotIn("relay", s.connection_line(send))
        self.assertNotIn("relay", s.connection_line(recv))

    @defer.inlineCallbacks
    def test_big_file_relay_only(self):
        """50 MB with --no-listen on both sides: through our relay."""
        send, recv = yield self.big_file(no_listen=True)
        self.assertIn("relay", s.connection_line(send))
        self.assertIn("relay", s.connection_line(recv))

    @defer.inlineCallbacks
    def directory(self, no_listen):
        tree = s.make_tree(os.path.join(self.src, "Ordner ✓"))
        send, recv, out = yield s.transfer(self, self.servers, "ours", "ours", tree,
                                           no_listen=no_listen)
        s.assert_ok(self, send, recv)
        self.assertEqual(os.listdir(out), ["Ordner ✓"])
        self.assertEqual(s.tree_of(os.path.join(out, "Ordner ✓")), s.tree_of(tree))
        return send, recv

    @defer.inlineCallbacks
    def test_directory_direct(self):
        """A directory, direct: the same tree arrives (files, contents,
        empty files, non-ASCII names)."""
        send, recv = yield self.directory(no_listen=False)
        self.assertNotIn("relay", s.connection_line(recv))

    @defer.inlineCallbacks
    def test_directory_relay_only(self):
        """A directory, relay-only: the same tree arrives."""
        send, recv = yield self.directory(no_listen=True)
        self.assertIn("relay", s.connection_line(recv))

    @defer.inlineCallbacks
    def test_text(self):
        """A text goes through the mailbox alone (no Transit)."""
        send = s.spawn(self, s.our_argv(self.servers, "send", "--code", "5-text-only",
                                        "--text", "Grüße ✓"), "sender", env=s.OUR_ENV)
        recv = s.spawn(self, s.our_argv(self.servers, "receive", "5-text-only"),
                       "receiver", env=s.OUR_ENV)
        yield s.wait_both(send, recv)
        s.assert_ok(self, send, recv)
        self.assertEqual(recv.stdout, "Grüße ✓\n".encode())

    @defer.inlineCallbacks
    def test_existing_file_not_overwritten(self):
        """The receiver already has a file of that name: it refuses before
        any question, the sender hears why, the old file is untouched."""
        path = os.path.join(self.src, "same.txt")
        with open(path, "w") as f:
            f.write("new")
        code = "6-no-overwrite"
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        with open(os.path.join(out, "same.txt"), "w") as f:
            f.write("old")
        send = s.spawn(self, s.our_argv(self.servers, "send", "--code", code, "same.txt"),
                       "sender", env=s.OUR_ENV, cwd=self.src)
        recv = s.spawn(self, s.our_argv(self.servers, "receive", "--accept-file", code),
                       "receiver", env=s.OUR_ENV, cwd=out)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (3, 3), send.describe() + recv.describe())
        self.assertIn(b"refusing to overwrite existing 'same.txt'", recv.stderr)
        self.assertIn(b"ERROR: the receiver declined: refusing to overwrite existing 'same.txt'",
                      send.stderr)
        with open(os.path.join(out, "same.txt")) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(out), ["same.txt"])

    @defer.inlineCallbacks
    def test_prompt_declined(self):
        """Without --accept-file the receiver asks 'ok? (Y/n): ' on stdout;
        'n' rejects and nothing is written."""
        path = os.path.join(self.src, "asked.txt")
        with open(path, "w") as f:
            f.write("x")
        code = "7-asked-first"
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        send = s.spawn(self, s.our_argv(self.servers, "send", "--code", code, "asked.txt"),
                       "sender", env=s.OUR_ENV, cwd=self.src)
        recv = s.spawn(self, s.our_argv(self.servers, "receive", code), "receiver",
                       env=s.OUR_ENV, cwd=out, stdin=b"n\n")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (3, 3), send.describe() + recv.describe())
        self.assertEqual(recv.stdout, b"ok? (Y/n): ")
        self.assertEqual(os.listdir(out), [])
