"""Records over Dilation's 1 MiB write split, end to end between two of
our wormholes over loopback (docs/transfer-v2.md "Record framing"): a
folder whose file list encodes to more than 8 MiB, the resume of a
folder of 50,000 files (an accept carrying more than 1 MiB of digests),
and, with a peer of an earlier release (no "framed-records"), an offer
too long for it refused before anything is sent. Files are tiny: the
records, not the bytes, are what is tested."""
import os

from twisted.internet import defer

from wormhole import transfer_v2 as T
from wormhole.errors import TransferError
from wormhole.transfer_v2 import _framing, _source
from wormhole.transfer_v2 import _messages as M

from ._support import _Attempts, read_tree

LONG = 250  # bytes of a name: near NAME_MAX, so few files make a long list


def long_tree(root, depth, files):
    """``files`` one-byte files in a chain of ``depth`` folders with long
    names: each entry of the file list is about (depth + 1) * LONG bytes."""
    folder = os.path.join(root, *(f"{i:03d}".ljust(LONG, "d") for i in range(depth)))
    os.makedirs(folder)
    for i in range(files):
        with open(os.path.join(folder, f"{i:05d}".ljust(LONG, "f")), "wb") as f:
            f.write(b"%d" % (i % 10))


def list_bytes(path):
    return len(M.encode_record(_source.prepare(path).offer))


class LargeOffers(_Attempts):
    timeout = 600

    @defer.inlineCallbacks
    def test_file_list_over_8_mib(self):
        """A folder offer whose DirectoryOffer is over 8 MiB (2,800 files,
        12 folders deep, names of 250 bytes) arrives exact."""
        src, dst = os.path.join(self.mktemp(), "big-list"), self.mktemp()
        os.makedirs(dst)
        long_tree(src, depth=11, files=2_800)
        self.assertGreater(list_bytes(src), 8 * 1024 * 1024)
        result, sent, _ = yield self.attempt(src, dst)
        self.assertEqual((result.files, result.bytes, sent), (2_800, 2_800, 2_800))
        self.assertEqual(read_tree(os.path.join(dst, "big-list")), read_tree(src))

    @defer.inlineCallbacks
    def test_resume_50000_files(self):
        """A folder of 50,000 one-byte files cut after about 40,000: the
        next session's accept lists the digests of the files kept (over
        1 MiB), only the rest is sent, and the tree arrives exact."""
        src, dst = os.path.join(self.mktemp(), "many"), self.mktemp()
        os.makedirs(dst)
        for d in range(50):
            folder = os.path.join(src, f"d{d:02d}")
            os.makedirs(folder)
            for i in range(1000):
                with open(os.path.join(folder, f"f{i:03d}"), "wb") as f:
                    f.write(b"x")
        result, _sent, _ = yield self.attempt(src, dst, stop_at=40_000)
        self.assertIsInstance(result, TransferError)
        result, sent, incoming = yield self.attempt(src, dst)
        # more than 1 MiB of digests went in the accept
        self.assertGreater(result.resumed_files * M.HASH_SIZE, _framing.UNFRAMED_MAX)
        self.assertEqual(incoming.resumed_files, result.resumed_files)
        self.assertEqual(sent, 50_000 - result.resumed_from)
        self.assertEqual((result.files, result.bytes), (50_000, 50_000))
        self.assertEqual(read_tree(os.path.join(dst, "many")), read_tree(src))


class EarlierRelease(_Attempts):
    @defer.inlineCallbacks
    def test_too_long_for_an_unframed_peer(self):
        """A receiver without "framed-records" (our earlier release) reads
        each delivery as a record: a file list over 1 MiB is refused by
        the offering side with a clear error before anything is sent,
        and a smaller offer still goes, unframed."""
        src, dst = os.path.join(self.mktemp(), "listed"), self.mktemp()
        os.makedirs(dst)
        long_tree(src, depth=3, files=1_100)
        small = os.path.join(self.mktemp(), "small")
        long_tree(small, depth=1, files=3)
        self.assertGreater(list_bytes(src), _framing.UNFRAMED_MAX)
        earlier = {"resume": {}, "empty-folders": {}, "session-totals": {}}
        w1, w2 = yield self.pair("send", "receive",
                                 versions2=T.app_versions("receive", earlier))
        offered = []

        def on_offer(incoming):
            offered.append(incoming.when_done())
            incoming.accept(dst)
        s1 = self.session(w1, "send")
        s2 = self.session(w2, "receive", on_offer=on_offer, features=earlier)
        yield defer.gatherResults([s1.start(), s2.start()])
        self.assertFalse(s1.negotiated.framed_records)
        e = yield self.assertFailure(s1.offer(src), TransferError)
        self.assertIn("earlier release", str(e))
        self.assertEqual(offered, [])
        result = yield s1.offer(small)
        self.assertEqual(result.files, 3)
        received = yield offered[0]
        self.assertEqual(read_tree(received.path), read_tree(small))
        closed2 = s2.when_closed()
        yield s1.close()
        yield closed2
