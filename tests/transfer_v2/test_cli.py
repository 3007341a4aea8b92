"""``wormhole send PATH...`` / ``wormhole receive`` over transfer-v2 as
processes, with our Mailbox server on 127.0.0.1, and the classic fallback
against the reference 0.24 CLI (docs/transfer-v2.md "The CLI")."""
import hashlib
import os
import re

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater

from wormhole.cli.ui.wording import CLASSIC_USED, V2_USED
from wormhole_relay.testing import start_transit_relay

from ..cli._support import TEXT, ref
from ..dilation._proxy import CuttableProxy, _Front
from ._support import _CLIBase, read_tree, write_tree

# the longest name most file systems take: 255 bytes of UTF-8
LONGEST_NAME = "\u00e9" * 127 + "x"
# the path line of a direct connection: we dialled the peer, or it us
# (then where it came from, as classic says it)
DIRECT = rb"\((->tcp|<-tcp):127\.0\.0\.1:\d+\)\.\."
SUMMARY = rb"%s [\d.]+ [kM]?B(ytes)? in \d+\.\d\d s \(.+\) via "


class CLI(_CLIBase):
    @defer.inlineCallbacks
    def test_several_paths(self):
        """Two files and a directory (nested, non-ASCII, a 255-byte name)
        in one session, over a direct connection; the receiver
        (--accept-file) gets them all, both say transfer-v2 was used and
        how the data went (direct: one side dialled, the other names the
        address the connection came from), the receiver sums the session up in
        one line, both exit 0."""
        tree = {"README": b"read me", "s\u00fcb/\u6587\u4ef6.txt": b"x" * 100_000,
                "deep/er/" + LONGEST_NAME: os.urandom(5000)}
        self.assertEqual(len(LONGEST_NAME.encode()), 255)
        write_tree(os.path.join(self.src, "proj"), tree)
        for name, size in (("one.bin", 300_000), ("two", 0)):
            with open(os.path.join(self.src, name), "wb") as f:
                f.write(os.urandom(size))
        send, recv = yield self.run_pair(
            self.ours("send", os.path.join(self.src, "one.bin"), os.path.join(self.src, "two"),
                      os.path.join(self.src, "proj")),
            self.ours("receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertIn(V2_USED.encode(), send.stderr)
        self.assertIn(V2_USED.encode(), recv.stderr)
        self.assertEqual(sorted(os.listdir(self.dst)), ["one.bin", "proj", "two"])
        self.assertEqual(read_tree(os.path.join(self.dst, "proj")), tree)
        self.assertSameFile("one.bin")
        sending = re.search(rb"Sending " + DIRECT, send.stderr)
        receiving = re.search(rb"Receiving " + DIRECT, recv.stderr)
        self.assertTrue(sending and receiving, "\n".join(r.describe() for r in self.runs))
        # one side dialled, the other accepted the same connection
        self.assertEqual({sending.group(1), receiving.group(1)}, {b"->tcp", b"<-tcp"})
        self.assertEqual(len(re.findall(SUMMARY % b"Sent", send.stderr)), 3)
        self.assertEqual(len(re.findall(SUMMARY % b"Received", recv.stderr)), 3)
        # the receiver's session line: it could not know the total beforehand
        self.assertRegex(recv.stderr, rb"Session: 3 of 3 offers received \(5 files\); "
                                      + SUMMARY % b"received")

    @defer.inlineCallbacks
    def test_relay_only(self):
        """Neither side listens (--no-listen: no direct hints), so the
        session goes through our Transit relay: a file with a non-ASCII
        name and a directory holding a 255-byte name arrive, and both
        sides name the relay in the path line and the summary."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        name = "\u00fcber \u6587\u4ef6.bin"
        with open(os.path.join(self.src, name), "wb") as f:
            f.write(os.urandom(200_000))
        tree = {"a": b"A" * 3000, "b/" + LONGEST_NAME: b"C"}
        write_tree(os.path.join(self.src, "dir"), tree)
        send, recv = yield self.run_pair(
            self.ours("send", "--no-listen", os.path.join(self.src, name),
                      os.path.join(self.src, "dir"), transit=relay.hint),
            self.ours("receive", "--no-listen", "--accept-file", transit=relay.hint))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertSameFile(name)
        self.assertEqual(read_tree(os.path.join(self.dst, "dir")), tree)
        path = f"(->relay:{relay.hint})".encode()
        self.assertIn(b"Sending " + path + b"..", send.stderr)
        self.assertIn(b"Receiving " + path + b"..", recv.stderr)
        self.assertRegex(send.stderr, SUMMARY % b"Sent" + re.escape(path[1:-1]))
        self.assertRegex(recv.stderr, SUMMARY % b"Received" + re.escape(path[1:-1]))

    @defer.inlineCallbacks
    def test_text(self):
        """A text between two of ours goes as classic's text offer in the
        mailbox (no Dilation for one message: docs/transfer-v2.md "Text"):
        printed on stdout exactly as classic prints it (escaped), also by a
        receiver with --only-text; neither side names a protocol."""
        send, recv = yield self.run_pair(
            self.ours("send", "--text", TEXT),
            self.ours("receive", "--only-text"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        # classic's (and the reference's) stdout: repr() without its quotes
        self.assertEqual(recv.stdout,
                         b"it\\'s \"quoted\"\\ttab\\nline \\x1b[0m \xe2\x9c\x93\n")
        for run in (send, recv):
            self.assertNotIn(V2_USED.encode(), run.stderr, run.describe())
            self.assertNotIn(CLASSIC_USED.encode(), run.stderr, run.describe())
        self.assertIn(b"text message sent", send.stderr)

    @defer.inlineCallbacks
    def test_one_offer_declined(self):
        """The human says no to the only offer: nothing is written, one
        ERROR line on each side, both exit 3 (declined), as classic."""
        with open(os.path.join(self.src, "f"), "wb") as f:
            f.write(b"unwanted")
        send, recv = yield self.run_pair(
            self.ours("send", os.path.join(self.src, "f")),
            self.ours("receive"), recv_stdin=b"n\n")
        self.assertExit(send, 3)
        self.assertExit(recv, 3)
        self.assertIn(b"ERROR: the receiver declined: transfer rejected\n", send.stderr)
        self.assertIn(b"ERROR: transfer rejected\n", recv.stderr)
        self.assertEqual(os.listdir(self.dst), [])

    @defer.inlineCallbacks
    def test_existing_name_refused(self):
        """Our receiver refuses to overwrite before any question: it says
        why, and so does the sender; both exit 3; the existing file is
        intact."""
        with open(os.path.join(self.src, "f"), "wb") as f:
            f.write(b"new")
        with open(os.path.join(self.dst, "f"), "wb") as f:
            f.write(b"old")
        send, recv = yield self.run_pair(
            self.ours("send", os.path.join(self.src, "f")),
            self.ours("receive"), recv_stdin=b"y\n")
        self.assertExit(send, 3)
        self.assertExit(recv, 3)
        self.assertIn(b"ERROR: the receiver declined: refusing to overwrite existing 'f'\n",
                      send.stderr)
        self.assertIn(b"ERROR: refusing to overwrite existing 'f'\n", recv.stderr)
        self.assertNotIn(b"ok?", recv.stderr + recv.stdout)
        with open(os.path.join(self.dst, "f"), "rb") as f:
            self.assertEqual(f.read(), b"old")

    @defer.inlineCallbacks
    def test_reject_one_accept_another(self):
        """The human refuses the first offer and accepts the second: only
        the second is written; the sender reports the rejection; both exit
        3 (like classic, a refused offer is a declined command)."""
        for name in ("no", "yes"):
            with open(os.path.join(self.src, name), "wb") as f:
                f.write(name.encode() * 10)
        send, recv = yield self.run_pair(
            self.ours("send", os.path.join(self.src, "no"), os.path.join(self.src, "yes")),
            self.ours("receive"), recv_stdin=b"n\ny\n")
        self.assertEqual(os.listdir(self.dst), ["yes"])
        self.assertIn(b"Rejected: the receiver declined: transfer rejected", send.stderr)
        self.assertIn(b"Sent file 'yes'", send.stderr)
        self.assertIn(b"ERROR: 1 of 2 offers did not complete", send.stderr)
        self.assertExit(send, 3)
        self.assertExit(recv, 3)

    @defer.inlineCallbacks
    def test_classic_forced(self):
        """--classic on the sender: the receiver (ours) sees no transfer-v2,
        says it falls back, and receives the classic way."""
        with open(os.path.join(self.src, "f"), "wb") as f:
            f.write(b"classic")
        send, recv = yield self.run_pair(
            self.ours("send", "--classic", os.path.join(self.src, "f")),
            self.ours("receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertNotIn(b"transfer-v2", send.stderr)
        self.assertNotIn(V2_USED.encode(), recv.stderr)
        self.assertIn(CLASSIC_USED.encode(), recv.stderr)
        with open(os.path.join(self.dst, "f"), "rb") as f:
            self.assertEqual(f.read(), b"classic")

    @defer.inlineCallbacks
    def test_fallback_to_reference_receiver(self):
        """The reference 0.24 announces no transfer-v2: our sender says so
        and sends the classic way (a directory here)."""
        write_tree(os.path.join(self.src, "d"), {"a": b"A", "b/c": b"C" * 1000})
        send, recv = yield self.run_pair(
            self.ours("send", "--transfer-v2", os.path.join(self.src, "d")),
            ref(self.srv.url, "receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertIn(CLASSIC_USED.encode(), send.stderr)
        self.assertEqual(read_tree(os.path.join(self.dst, "d")), {"a": b"A", "b/c": b"C" * 1000})

    @defer.inlineCallbacks
    def test_fallback_from_reference_sender(self):
        """The reference 0.24 sends a file to our receiver: no transfer-v2
        from it, so ours receives the classic way."""
        with open(os.path.join(self.src, "f.txt"), "wb") as f:
            f.write(b"from the reference" * 1000)
        send, recv = yield self.run_pair(
            ref(self.srv.url, "send", os.path.join(self.src, "f.txt")),
            self.ours("receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertNotIn(V2_USED.encode(), recv.stderr)
        with open(os.path.join(self.dst, "f.txt"), "rb") as f:
            self.assertEqual(f.read(), b"from the reference" * 1000)

    @defer.inlineCallbacks
    def test_several_paths_to_classic_peer(self):
        """Several paths to a classic receiver: a clear error on both sides
        (the receiver is told why), nothing sent."""
        for name in ("a", "b"):
            with open(os.path.join(self.src, name), "wb") as f:
                f.write(b"x")
        send, recv = yield self.run_pair(
            self.ours("send", os.path.join(self.src, "a"), os.path.join(self.src, "b")),
            ref(self.srv.url, "receive", "--accept-file"))
        self.assertExit(send, 1)
        self.assertExit(recv, 1)
        self.assertIn(b"only speaks the classic protocol", send.stderr)
        self.assertIn(b"only speaks the classic protocol", recv.stderr)
        self.assertEqual(os.listdir(self.dst), [])


class _CountingFront(_Front):
    def dataReceived(self, data):
        self.factory.forwarded += len(data)
        _Front.dataReceived(self, data)
        self.factory.maybe_cut()


class _CuttingProxy(CuttableProxy):
    """Cuts every connection each time the bytes it forwarded towards the
    relay (both peers, every connection) pass the next of ``marks``."""
    protocol = _CountingFront

    def __init__(self, reactor, host, port, marks):
        CuttableProxy.__init__(self, reactor, host, port)
        self.forwarded = 0
        self.marks = list(marks)

    def maybe_cut(self):
        if self.marks and self.forwarded >= self.marks[0]:
            self.marks.pop(0)
            self.reactor.callLater(0, self.cut)


class ReconnectCLI(_CLIBase):
    @defer.inlineCallbacks
    def test_three_cuts_mid_file(self):
        """Relay-only through a proxy that cuts every connection three
        times while a 24 MB file streams: Dilation reconnects, the sender
        says so each time (with the path), the file arrives once and
        intact, both exit 0."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        size = 24 * 1000 * 1000
        proxy = _CuttingProxy(reactor, "127.0.0.1", relay.port,
                              [size // 4, size // 2, 3 * size // 4])
        lp = reactor.listenTCP(0, proxy, interface="127.0.0.1")
        self.addCleanup(lp.stopListening)
        self.addCleanup(proxy.cut)
        hint = f"tcp:127.0.0.1:{lp.getHost().port}"
        with open(os.path.join(self.src, "big"), "wb") as f:
            f.write(os.urandom(size))
        send, recv = yield self.run_pair(
            self.ours("send", "--no-listen", "--hide-progress", os.path.join(self.src, "big"),
                      transit=hint),
            self.ours("receive", "--no-listen", "--hide-progress", "--accept-file",
                      transit=hint))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(proxy.cuts, 3)
        self.assertEqual(send.stderr.count(f"Reconnected to the peer (->relay:{hint})".encode()),
                         3, send.describe())
        self.assertEqual(os.listdir(self.dst), ["big"])
        self.assertSameFile("big")


class ResumeCLI(_CLIBase):
    """Interrupted 200 MB transfers finished by a new code (the "resume"
    feature): the process killed at ~50%, then a new pair of commands."""
    SIZE = 200 * 1000 * 1000

    @defer.inlineCallbacks
    def until_partial(self, nbytes):
        """Wait until the receiver's resumable bytes reach ``nbytes``."""
        path = os.path.join(self.dst, ".wormhole-partial-big.resume")
        for _ in range(12000):
            if os.path.exists(path) and os.path.getsize(path) >= nbytes:
                return
            yield deferLater(reactor, 0.01, lambda: None)
        self.fail(f"the receiver never held {nbytes} bytes")

    @defer.inlineCallbacks
    def interrupted_then_finished(self, kill):
        data = os.urandom(self.SIZE)
        with open(os.path.join(self.src, "big"), "wb") as f:
            f.write(data)
        send = self.spawn(self.ours("send", "--transfer-v2", "--hide-progress",
                                    os.path.join(self.src, "big")),
                          "sender")
        m = yield send.wait_for(rb"wormhole receive (\S+)")
        recv = self.spawn(self.ours("receive", "--hide-progress", "--accept-file",
                                    m.group(1).decode()), "receiver", cwd=self.dst)
        yield self.until_partial(self.SIZE // 2)
        yield self.kill_then_interrupt(*((send, recv) if kill == "sender" else (recv, send)))
        self.assertNotIn("big", os.listdir(self.dst))
        send, recv = yield self.run_pair(
            self.ours("send", "--transfer-v2", "--hide-progress", os.path.join(self.src, "big")),
            self.ours("receive", "--hide-progress", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        m = re.search(rb"resumed at byte (\d+), (\d+) bytes sent", send.stderr)
        self.assertIsNotNone(m, send.describe())
        offset, sent = int(m.group(1)), int(m.group(2))
        self.assertGreaterEqual(offset, self.SIZE // 2)
        self.assertEqual(offset + sent, self.SIZE)
        self.assertIn(f"Resuming at byte {offset}".encode(), recv.stderr)
        self.assertEqual(sorted(os.listdir(self.dst)), ["big"])
        with open(os.path.join(self.dst, "big"), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest())

    def test_sender_killed(self):
        """The sender killed at ~50%: the next transfer sends only the rest."""
        return self.interrupted_then_finished("sender")

    def test_receiver_killed(self):
        """The receiver killed at ~50%: it keeps what reached the disk; the
        next transfer sends only the rest."""
        return self.interrupted_then_finished("receiver")


class Share(_CLIBase):
    @defer.inlineCallbacks
    def test_both_directions(self):
        """Two 'wormhole share' sides offer to each other in one session
        (a file one way, a folder the other), both accept everything; the
        first side's end of input ends the session for both, exit 0."""
        there = os.path.abspath(self.mktemp())
        os.makedirs(there)
        with open(os.path.join(self.src, "from-a"), "wb") as f:
            f.write(b"A" * 50_000)
        write_tree(os.path.join(self.src, "from-b"), {"x": b"x", "y/z": b"zz"})
        a = self.spawn(self.ours("share", "--accept-file", "--hide-progress",
                                 os.path.join(self.src, "from-a")), "a", cwd=there)
        m = yield a.wait_for(rb"wormhole share --code (\S+)")
        b = self.spawn(self.ours("share", "--accept-file", "--hide-progress", "--code",
                                 m.group(1).decode(), os.path.join(self.src, "from-b")),
                       "b", cwd=self.dst)
        self.runs = (a, b)
        for side in (a, b):
            yield side.wait_for(rb"Sent (file|directory) ")
            yield side.wait_for(rb"Received (file|directory) written to")
        a.transport.closeStdin()
        yield defer.gatherResults([a.ended, b.ended])
        self.assertExit(a, 0)
        self.assertExit(b, 0)
        self.assertIn(b"Session complete.", b.stderr)
        self.assertEqual(os.listdir(self.dst), ["from-a"])
        self.assertEqual(read_tree(os.path.join(there, "from-b")), {"x": b"x", "y/z": b"zz"})


class ShareTyped(_CLIBase):
    @defer.inlineCallbacks
    def test_typed_path_and_output_dir(self):
        """A path typed into 'wormhole share' while no question waits is
        offered next; a name that does not exist is said and not offered;
        the peer's offers go into its -o folder."""
        inbox = os.path.abspath(self.mktemp())
        os.makedirs(inbox)
        with open(os.path.join(self.src, "typed.bin"), "wb") as f:
            f.write(b"T" * 40_000)
        a = self.spawn(self.ours("share", "--hide-progress"), "a", cwd=self.src)
        m = yield a.wait_for(rb"wormhole share --code (\S+)")
        b = self.spawn(self.ours("share", "--accept-file", "--hide-progress", "-o", inbox,
                                 "--code", m.group(1).decode()), "b", cwd=self.dst)
        self.runs = (a, b)
        yield a.wait_for(rb"type a path to offer it")
        a.write(b"no-such-file\n")
        yield a.wait_for(rb"Not offered: .*no-such-file")
        a.write(b"typed.bin\n")
        yield a.wait_for(rb"Sent file ")
        a.transport.closeStdin()
        yield defer.gatherResults([a.ended, b.ended])
        self.assertExit(a, 0)
        self.assertExit(b, 0)
        self.assertEqual(os.listdir(self.dst), [])
        with open(os.path.join(inbox, "typed.bin"), "rb") as f:
            self.assertEqual(f.read(), b"T" * 40_000)


class ShareBothDecline(_CLIBase):
    @defer.inlineCallbacks
    def test_both_decline(self):
        """Both sides offer a name the other already has, with input
        ended at once: each refuses the other's offer, and each hears its
        own offer declined (exit 3 on both), never "the peer ended the
        session": a side ends the session only once the offers the peer
        announced came and had its answer, and its refusal leaves before
        its close (docs/transfer-v2.md "wormhole share [PATH]..."). Three rounds:
        which side ends first is a race."""
        for round_ in range(3):
            here, there = (os.path.abspath(self.mktemp()) for _ in range(2))
            for folder, data in ((here, b"here"), (there, b"there")):
                os.makedirs(folder)
                with open(os.path.join(folder, "same.txt"), "wb") as f:
                    f.write(data)
            a = self.spawn(self.ours("share", "--accept-file", "--hide-progress", "same.txt"),
                           f"a{round_}", cwd=here, stdin=b"")
            m = yield a.wait_for(rb"wormhole share --code (\S+)")
            b = self.spawn(self.ours("share", "--accept-file", "--hide-progress", "--code",
                                     m.group(1).decode(), "same.txt"), f"b{round_}", cwd=there,
                           stdin=b"")
            self.runs = (a, b)
            yield defer.gatherResults([a.ended, b.ended])
            for run in (a, b):
                self.assertExit(run, 3)
                # refused before any question, and the sender told why
                self.assertIn(b"Sending: the receiver declined: refusing to overwrite existing "
                              b"'same.txt'", run.stderr, run.describe())
                self.assertNotIn(b"ended the session", run.stderr, run.describe())
            for folder, data in ((here, b"here"), (there, b"there")):
                with open(os.path.join(folder, "same.txt"), "rb") as f:
                    self.assertEqual(f.read(), data)
