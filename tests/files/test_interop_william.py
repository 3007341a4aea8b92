"""Our CLI and the Go client wormhole-william 1.0.6 (Debian package), text
and file both ways, on our Mailbox server and Transit relay.

wormhole-william has no option for its Transit relay (it always uses
transit.magic-wormhole.io:4001) and advertises its interface addresses:
everything runs in a loopback-only namespace whose /etc/hosts points that
name at 127.0.0.1, where our relay listens on port 4001. When
wormhole-william is missing these tests fail, saying how to install it."""
import os

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s

SIZE = 400 * 1000 + 3
TEXT = "Grüße from the other wormhole ✓"


class WormholeWilliam(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        s.wormhole_william()  # fail early, with the installation hint
        self.ns = s.Namespace.create(self, hosts=[s.PUBLIC_TRANSIT_HOST])
        self.servers = yield s.Servers.start(self, ns=self.ns, relay="ours",
                                             relay_port=s.PUBLIC_TRANSIT_PORT)

    @defer.inlineCallbacks
    def text(self, sender, receiver, code):
        send = s.spawn(self, s.ARGV[sender](self.servers, "send", "--code", code,
                                            "--text", TEXT), f"{sender} sender",
                       ns=self.ns, env=s._env(sender))
        recv = s.spawn(self, s.ARGV[receiver](self.servers, "receive", code),
                       f"{receiver} receiver", ns=self.ns, env=s._env(receiver))
        yield s.wait_both(send, recv)
        s.assert_ok(self, send, recv)
        self.assertEqual(recv.stdout.decode("utf-8").strip(), TEXT)

    def test_text_ours_to_william(self):
        """Our text is printed by wormhole-william."""
        return self.text("ours", "ww", "11-text-to-go")

    def test_text_william_to_ours(self):
        """wormhole-william's text is printed by us."""
        return self.text("ww", "ours", "12-text-from-go")

    @defer.inlineCallbacks
    def file(self, sender, receiver):
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        path = os.path.join(src, "payload.bin")
        digest = s.write_file(path, SIZE)
        send, recv, out = yield s.transfer(self, self.servers, sender, receiver, path,
                                           ns=self.ns)
        s.assert_ok(self, send, recv)
        self.assertEqual(os.listdir(out), ["payload.bin"])
        self.assertEqual(s.sha256_of(os.path.join(out, "payload.bin")), digest)

    def test_file_ours_to_william(self):
        """Our file arrives whole at wormhole-william (it says yes on stdin)."""
        return self.file("ours", "ww")

    def test_file_william_to_ours(self):
        """wormhole-william's file arrives whole here."""
        return self.file("ww", "ours")

    @defer.inlineCallbacks
    def test_directory_william_to_ours(self):
        """wormhole-william's zipfile of a tree unpacks here into the same tree."""
        src = os.path.abspath(self.mktemp())
        tree = s.make_tree(os.path.join(src, "tree"))
        send, recv, out = yield s.transfer(self, self.servers, "ww", "ours", tree,
                                           ns=self.ns)
        s.assert_ok(self, send, recv)
        self.assertEqual(s.tree_of(os.path.join(out, "tree")), s.tree_of(tree))

    @defer.inlineCallbacks
    def test_directory_ours_to_william(self):
        """Our zipfile of a tree unpacks at wormhole-william into the
        same tree."""
        src = os.path.abspath(self.mktemp())
        tree = s.make_tree(os.path.join(src, "tree"))
        send, recv, out = yield s.transfer(self, self.servers, "ours", "ww", tree,
                                           ns=self.ns)
        s.assert_ok(self, send, recv)
        self.assertEqual(s.tree_of(os.path.join(out, "tree")), s.tree_of(tree))
