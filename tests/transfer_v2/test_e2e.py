"""transfer-v2 end to end over loopback: two of our wormholes with our
Mailbox server dilate and run a session through the library API
(docs/transfer-v2.md). Waits on events only; every test stops what it
started."""
import hashlib
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole.errors import TransferError

from ._support import _Attempts, _Base, read_tree, write_tree


class Sessions(_Base):
    @defer.inlineCallbacks
    def test_files_and_directories_one_session(self):
        """One send session offers two files and a directory (nested,
        non-ASCII and long names, nested empty folders and a folder whose
        only content is empty folders: the "empty-folders" feature); the
        receiver accepts all; every byte, name and folder arrives, nothing
        else is left behind."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(src)
        os.makedirs(dst)
        long_name = "l" * 200 + ".txt"
        tree = {"README": b"hello", "src/hello.py": b"print(1)\n" * 1000,
                "src/deep/\u00e9t\u00e9 \u6587.bin": os.urandom(300_000), long_name: b""}
        write_tree(os.path.join(src, "project"), tree)
        for folder in ("empty/emptier", "src/deep/nothing", "only-empties/a",
                       "only-empties/b/c"):
            os.makedirs(os.path.join(src, "project", *folder.split("/")))
        with open(os.path.join(src, "a.bin"), "wb") as f:
            f.write(os.urandom(1_000_000))
        with open(os.path.join(src, "empty"), "wb"):
            pass
        w1, w2 = yield self.pair("send", "receive")
        done = []

        def on_offer(incoming):
            done.append(incoming.when_done())
            incoming.accept(dst)
        s1 = self.session(w1, "send")
        s2 = self.session(w2, "receive", on_offer=on_offer)
        yield defer.gatherResults([s1.start(), s2.start()])
        results = yield defer.gatherResults([
            s1.offer(os.path.join(src, "a.bin")), s1.offer(os.path.join(src, "empty")),
            s1.offer(os.path.join(src, "project"))])
        self.assertEqual([(r.files, r.bytes) for r in results],
                         [(1, 1_000_000), (1, 0), (4, sum(map(len, tree.values())))])
        received = yield defer.gatherResults(done)
        self.assertEqual(sorted(os.path.basename(r.path) for r in received),
                         ["a.bin", "empty", "project"])
        self.assertEqual(read_tree(os.path.join(dst, "project")), tree)
        self.assertEqual(read_tree(os.path.join(dst, "project"), folders=True),
                         read_tree(os.path.join(src, "project"), folders=True))
        with open(os.path.join(src, "a.bin"), "rb") as a, \
                open(os.path.join(dst, "a.bin"), "rb") as b:
            self.assertEqual(hashlib.sha256(a.read()).digest(),
                             hashlib.sha256(b.read()).digest())
        self.assertEqual(sorted(os.listdir(dst)), ["a.bin", "empty", "project"])
        closed2 = s2.when_closed()
        yield s1.close()
        yield closed2

    @defer.inlineCallbacks
    def test_connect_both_directions_reject_and_accept(self):
        """Two connect peers offer to each other in one session; one offer
        is rejected (the sender gets the reason), the others arrive; text
        messages go both ways."""
        d1, d2, src = self.mktemp(), self.mktemp(), self.mktemp()
        for d in (d1, d2, src):
            os.makedirs(d)
        for name in ("x", "y", "z"):
            with open(os.path.join(src, name), "wb") as f:
                f.write(name.encode() * 1000)
        texts1, texts2 = [], []
        w1, w2 = yield self.pair("connect", "connect")

        def deciding(folder):
            def on_offer(incoming):
                if incoming.offer.filename == "y":
                    incoming.reject("not y, thanks")
                else:
                    incoming.accept(folder)
            return on_offer
        s1 = self.session(w1, "connect", on_offer=deciding(d1), on_text=texts1.append)
        s2 = self.session(w2, "connect", on_offer=deciding(d2), on_text=texts2.append)
        yield defer.gatherResults([s1.start(), s2.start()])
        r_x = yield s1.offer(os.path.join(src, "x"))
        r_z = yield s2.offer(os.path.join(src, "z"))
        self.assertEqual((r_x.files, r_z.files), (1, 1))
        e = yield self.assertFailure(s1.offer(os.path.join(src, "y")), T.OfferRejected)
        self.assertEqual(e.reason, "not y, thanks")
        s1.send_text("hi from 1")
        s2.send_text("hi from 2")
        self.assertEqual(os.listdir(d2), ["x"])
        self.assertEqual(os.listdir(d1), ["z"])
        closed1 = s1.when_closed()
        yield s2.close()
        yield closed1
        self.assertEqual((texts1, texts2), (["hi from 2"], ["hi from 1"]))

    @defer.inlineCallbacks
    def test_peer_without_empty_folders(self):
        """A receiver that does not declare "empty-folders" gets the files
        of a folder and none of its empty folders (the sender sends no
        attribute the peer did not declare)."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(dst)
        write_tree(src, {"a": b"a", "sub/b": b"b"})
        os.makedirs(os.path.join(src, "empty"))
        features = {"resume": {}}
        w1, w2 = yield self.pair("send", "receive",
                                 versions2=T.app_versions("receive", features))
        done = []

        def on_offer(incoming):
            self.assertEqual(incoming.offer.folders, ())
            done.append(incoming.when_done())
            incoming.accept(dst)
        s1 = self.session(w1, "send")
        s2 = self.session(w2, "receive", on_offer=on_offer, features=features)
        yield defer.gatherResults([s1.start(), s2.start()])
        yield s1.offer(src)
        received = yield done[0]
        self.assertEqual(read_tree(received.path, folders=True),
                         {"a": b"a", "sub/": None, "sub/b": b"b"})
        closed2 = s2.when_closed()
        yield s1.close()
        yield closed2

    @defer.inlineCallbacks
    def test_classic_peer(self):
        """A peer without transfer-v2 in its app_versions: start() fails
        with PeerUsesClassic, so the application can fall back."""
        w1, _w2 = yield self.pair("send", None, versions2={})
        s1 = self.session(w1, "send")
        yield self.assertFailure(s1.start(), T.PeerUsesClassic)

    @defer.inlineCallbacks
    def test_both_receive(self):
        """Two receive peers: IncompatibleModes on both sides."""
        w1, w2 = yield self.pair("receive", "receive")
        yield self.assertFailure(self.session(w1, "receive").start(), T.IncompatibleModes)
        yield self.assertFailure(self.session(w2, "receive").start(), T.IncompatibleModes)


class Relayed(_Base):
    @defer.inlineCallbacks
    def setUp(self):
        yield _Base.setUp(self)
        from wormhole_relay.testing import start_transit_relay
        self.relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(self.relay.stop)

    @defer.inlineCallbacks
    def send_one(self, size, hint, on_progress=None):
        """Offer one file of ``size`` random bytes, neither side listening
        (relay ``hint`` only); return (offer result, source bytes, received path)."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(src)
        os.makedirs(dst)
        data = os.urandom(size)
        with open(os.path.join(src, "big"), "wb") as f:
            f.write(data)
        w1, w2 = yield self.pair("send", "receive")
        received = []

        def on_offer(incoming):
            received.append(incoming.when_done())
            if on_progress is not None:
                incoming.progress = on_progress
            incoming.accept(dst)
        kw = {"no_listen": True, "transit_relay_location": hint}
        s1 = self.session(w1, "send", dilate_kwargs=kw)
        s2 = self.session(w2, "receive", on_offer=on_offer, dilate_kwargs=kw)
        yield defer.gatherResults([s1.start(), s2.start()])
        result = yield s1.offer(os.path.join(src, "big"))
        done = yield received[0]
        yield s1.close()
        yield s2.when_closed()
        return result, data, done.path

    @defer.inlineCallbacks
    def test_relay_only(self):
        """Neither side listens: the offer travels through our relay."""
        result, data, path = yield self.send_one(2_000_000, self.relay.hint)
        self.assertEqual(result.bytes, len(data))
        with open(path, "rb") as f:
            self.assertEqual(f.read(), data)

    @defer.inlineCallbacks
    def test_three_cuts_mid_file(self):
        """A proxy in front of the relay cuts the connection three times
        while a 24 MB file streams; Dilation reconnects and the file
        arrives exactly once (size and hash; one offer, one file)."""
        from tests.dilation._proxy import CuttableProxy
        host, port = self.relay.hint.split(":")[1:]
        proxy = CuttableProxy(reactor, host, int(port))
        lp = reactor.listenTCP(0, proxy, interface="127.0.0.1")
        self.addCleanup(lp.stopListening)
        self.addCleanup(proxy.cut)
        total = 24 * 1000 * 1000
        marks = [total // 4, total // 2, 3 * total // 4]
        seen = [0]

        def progress(n):
            seen[0] += n
            if marks and seen[0] >= marks[0]:
                marks.pop(0)
                reactor.callLater(0, proxy.cut)
        result, data, path = yield self.send_one(
            total, f"tcp:127.0.0.1:{lp.getHost().port}", progress)
        self.assertEqual(proxy.cuts, 3)
        self.assertEqual((result.files, result.bytes), (1, total))
        self.assertEqual(seen[0], total)
        with open(path, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest())


class Resume(_Attempts):
    """The "resume" feature end to end: a transfer cut short by the
    receiving side going away, finished by a new session."""

    @defer.inlineCallbacks
    def test_resume_after_interruption(self):
        """Cut at ~50% of 20 MB; a new session resumes at what the
        receiver kept: only the rest is streamed (counted), the final hash
        covers the whole file."""
        path, dst, data = self.source(20_000_000)
        result, _sent, _ = yield self.attempt(path, dst, stop_at=10_000_000)
        self.assertIsInstance(result, TransferError)
        self.assertNotIn("big", os.listdir(dst))
        result, sent, incoming = yield self.attempt(path, dst)
        self.assertGreaterEqual(result.resumed_from, 5_000_000)
        self.assertEqual(incoming.resumed_from, result.resumed_from)
        self.assertEqual(sent, len(data) - result.resumed_from)
        self.assertEqual(result.bytes, len(data))
        self.assertEqual(os.listdir(dst), ["big"])
        with open(os.path.join(dst, "big"), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest())

    @defer.inlineCallbacks
    def test_peer_gone_then_resumed(self):
        """The receiving wormhole vanishes mid-file without ending the
        session: the sender's session ends after its peer_timeout (the
        offer fails, no hang); the bytes the receiver kept are resumed."""
        path, dst, data = self.source(10_000_000)
        w1, w2 = yield self.pair("send", "receive")
        seen = [0]

        def on_offer(offer):
            def progress(n):
                seen[0] += n
                if seen[0] >= 5_000_000 and not gone:
                    gone.append(True)
                    reactor.callLater(0, lambda: w2.close().addErrback(lambda f: None))
            offer.progress = progress
            offer.accept(dst)
        gone = []
        s1 = self.session(w1, "send", peer_timeout=1.0)
        s2 = self.session(w2, "receive", on_offer=on_offer)
        yield defer.gatherResults([s1.start(), s2.start()])
        e = yield self.assertFailure(s1.offer(path), T.OfferLost)
        self.assertIn("unreachable for 1.0 s", str(e))
        self.assertIn("unreachable", (yield s1.when_closed()))
        result, sent, _ = yield self.attempt(path, dst)
        self.assertGreaterEqual(result.resumed_from, 5_000_000)
        self.assertEqual(sent, len(data) - result.resumed_from)

    @defer.inlineCallbacks
    def test_changed_source_sent_in_full(self):
        """The source changed between the sessions: the kept bytes are
        discarded (the receiver is told why) and the file is sent in full."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(src)
        os.makedirs(dst)
        path = os.path.join(src, "big")
        with open(path, "wb") as f:
            f.write(os.urandom(8_000_000))
        yield self.attempt(path, dst, stop_at=4_000_000)
        data = os.urandom(8_000_000)
        with open(path, "wb") as f:
            f.write(data)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2 * 10 ** 9))
        result, sent, incoming = yield self.attempt(path, dst)
        self.assertEqual((result.resumed_from, sent), (0, len(data)))
        self.assertIn("another version", incoming.discarded)
        with open(os.path.join(dst, "big"), "rb") as f:
            self.assertEqual(f.read(), data)


class DirectoryResume(_Attempts):
    """The "resume" feature for a folder end to end: a session cut short
    by the receiving side, finished by a new session."""

    def tree(self):
        """A folder of 5 files (about 6 MB) with an empty folder, and an
        empty destination."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(dst)
        files = {f"f{i}": os.urandom(1_200_000) for i in range(4)}
        files["sub/last"] = os.urandom(1_000_000)
        write_tree(src, files)
        os.makedirs(os.path.join(src, "sub", "empty"))
        return src, dst, sum(map(len, files.values()))

    @defer.inlineCallbacks
    def test_resume_directory(self):
        """Cut at ~50%; the next session skips the files the receiver
        verified and resumes the one it was in: only the rest is streamed
        (counted), and the tree arrives exact."""
        src, dst, total = self.tree()
        result, _sent, _ = yield self.attempt(src, dst, stop_at=total // 2)
        self.assertIsInstance(result, TransferError)
        result, sent, incoming = yield self.attempt(src, dst)
        self.assertGreaterEqual(result.resumed_files, 1)
        self.assertGreaterEqual(result.resumed_from, total // 4)
        self.assertEqual((incoming.resumed_from, incoming.resumed_files),
                         (result.resumed_from, result.resumed_files))
        self.assertEqual(sent, total - result.resumed_from)
        self.assertEqual((result.files, result.bytes), (5, total))
        self.assertEqual(os.listdir(dst), [os.path.basename(src)])
        self.assertEqual(read_tree(os.path.join(dst, os.path.basename(src)), folders=True),
                         read_tree(src, folders=True))

    @defer.inlineCallbacks
    def test_changed_kept_file_sent_again(self):
        """A kept file changed at the source between the sessions: that
        file travels again (both sides say why; the receiver's ``held``
        follows the answer), the other kept files do not, and the tree
        arrives exact."""
        src, dst, total = self.tree()
        yield self.attempt(src, dst, stop_at=total // 2)
        with open(os.path.join(src, "f0"), "r+b") as f:
            f.write(b"changed")
        result, sent, incoming = yield self.attempt(src, dst)
        self.assertGreaterEqual(incoming.resumed_files, 1)  # f0 was kept
        self.assertEqual(result.resumed_files, incoming.resumed_files - 1)
        self.assertEqual(result.resumed_from, incoming.resumed_from - 1_200_000)
        self.assertEqual(incoming.held, result.resumed_from)  # followed the answer
        self.assertEqual(sent, total - result.resumed_from)
        self.assertIn("1 of the files the receiver kept changed", result.resume_refused)
        self.assertIn("1 of the files kept", incoming.discarded)
        self.assertEqual(read_tree(os.path.join(dst, os.path.basename(src)), folders=True),
                         read_tree(src, folders=True))


class IncomingLimits(unittest.TestCase):
    def test_too_many_offers_at_once(self):
        """Beyond MAX_INCOMING_OFFERS held offers, a new one is rejected
        before the application is asked; below it, the application decides."""
        from wormhole.transfer_v2 import _offers, _versions
        asked, rejected = [], []

        class Incoming:
            def reject(self, reason):
                rejected.append(reason)
        negotiated = _versions.negotiate("receive", T.app_versions("send"))
        offers = _offers.Offers(on_offer=asked.append)
        for _ in range(_offers.MAX_INCOMING_OFFERS):
            offers.opened(object(), theirs=True)
        offers.ask(Incoming(), negotiated)
        self.assertEqual((len(asked), rejected), (1, []))
        offers.opened(object(), theirs=True)
        offers.ask(Incoming(), negotiated)
        self.assertEqual(len(asked), 1)
        self.assertIn("too many offers", rejected[0])
