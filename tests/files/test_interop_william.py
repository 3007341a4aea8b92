"""Our CLI and the Go client wormhole-william 1.0.6 (Debian package), text
and file both ways, on our Mailbox server and Transit relay.

wormhole-william has no option for its Transit relay (it always uses
transit.magic-wormhole.io:4001) and advertises its interface addresses:
everything runs in a loopback-only namespace whose /etc/hosts points that
name at 127.0.0.1, where our relay listens on port 4001. When
wormhole-william is missing these tests fail, saying how to install it.

Our Mailbox server's welcome carries ``your-address`` (as the reference
0.8 server's does: docs/interop.md, "Server to client (`test_wire`)"):
every test here also shows that wormhole-william ignores it without harm.

When wormhole-william sends, its relay connection goes through a forwarder
(``_ww_gate.py``) that holds the receiver's handshake until the sender has
spoken: wormhole-william 1.0.6 otherwise closes its own winning relay
connection about one run in four ("use of closed network connection"),
with any relay (docs/relay.md, "wormhole-william as a sender")."""
import os
import sys

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s

SIZE = 400 * 1000 + 3
TEXT = "Grüße from the other wormhole ✓"
GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ww_gate.py")
# the tests in which wormhole-william sends a file over Transit
WW_SENDS = {"test_file_william_to_ours", "test_directory_william_to_ours"}


@defer.inlineCallbacks
def gated_relay(testcase, ns):
    """Our relay on a free port, behind the gate on the public relay's
    port (where wormhole-william dials); ``Servers`` with both clients'
    Transit through the gate."""
    servers = yield s.Servers.start(testcase, ns=ns, relay="ours", relay_port=0)
    relay_port = int(servers.transit.rsplit(":", 1)[1])
    gate = s.spawn(testcase, [sys.executable, GATE, str(s.PUBLIC_TRANSIT_PORT),
                              str(relay_port)], "ww gate", ns=ns)
    yield gate.wait_for(rb"gate starting on")
    servers.transit = f"tcp:127.0.0.1:{s.PUBLIC_TRANSIT_PORT}"
    return servers


def assert_ok(testcase, send, recv):
    """``_support.assert_ok``, naming wormhole-william's own race when its
    sender closed its connection itself (should the gate ever miss)."""
    if b"use of closed network connection" in send.stderr:
        testcase.fail("wormhole-william closed its own Transit connection (its "
                      "relay race, docs/relay.md 'wormhole-william as a sender'):\n"
                      + send.describe() + "\n" + recv.describe())
    s.assert_ok(testcase, send, recv)


def assert_fell_back(testcase, **runs):
    """Our side (``ours=run``) met wormhole-william, which announces no
    transfer-v2: it said, in one line, that it uses the classic protocol
    (docs/transfer-v2.md "The CLI")."""
    from wormhole.cli.ui.wording import CLASSIC_USED
    testcase.assertIn(CLASSIC_USED.encode(), runs["ours"].stderr, runs["ours"].describe())


class WormholeWilliam(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        s.wormhole_william()  # fail early, with the installation hint
        self.ns = s.Namespace.create(self, hosts=[s.PUBLIC_TRANSIT_HOST])
        if self._testMethodName in WW_SENDS:
            self.servers = yield gated_relay(self, self.ns)
        else:
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
        # a text is classic's text offer whatever the peer speaks: no line
        # names a protocol (docs/transfer-v2.md "Text")
        ours = send if sender == "ours" else recv
        self.assertNotIn(b"protocol", ours.stderr, ours.describe())
        self.assertNotIn(b"transfer-v2", ours.stderr, ours.describe())
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
        assert_ok(self, send, recv)
        assert_fell_back(self, **{sender: send, receiver: recv})
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
        assert_ok(self, send, recv)
        assert_fell_back(self, ours=recv)
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
        assert_fell_back(self, ours=send)
        self.assertEqual(s.tree_of(os.path.join(out, "tree")), s.tree_of(tree))
