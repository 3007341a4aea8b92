"""What we offer (transfer_v2._source): offers built from files and
folders, and the Streamer on task.Clock: headers, data records within the
size limit, per-file hashes, pausing, and a file that changed after the
offer aborting the send."""
import hashlib
import os

from twisted.internet import task
from twisted.trial import unittest

from wormhole.transfer_v2 import _framing as F
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _source as S


class FakeTransport:
    def __init__(self):
        self.records = []
        self.producer = None

    def write(self, data):
        self.records.append(M.parse_record(data))

    def registerProducer(self, producer, streaming):
        self.producer = producer

    def unregisterProducer(self):
        self.producer = None


class Sources(unittest.TestCase):
    def setUp(self):
        self.root = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(self.root, "d", "sub"))
        os.makedirs(os.path.join(self.root, "d", "emptydir"))
        for rel, size in [("d/b", 70000), ("d/a", 3), ("d/sub/c", 0), ("f", 10)]:
            with open(os.path.join(self.root, rel), "wb") as f:
                f.write(os.urandom(size))
        os.symlink(os.path.join(self.root, "f"), os.path.join(self.root, "d", "link"))

    def test_prepare(self):
        """A file gives a FileOffer; a folder a DirectoryOffer listing its
        files in sorted order, links to files followed (links to folders:
        tests/unit/files/test_outgoing_tree.py, classic's walk)."""
        out = S.prepare(os.path.join(self.root, "f"))
        self.assertEqual(out.offer.filename, "f")
        self.assertEqual(out.offer.bytes, 10)
        out = S.prepare(os.path.join(self.root, "d") + "/")
        self.assertEqual(out.offer.base, "d")
        self.assertEqual(out.offer.files, (("a",), ("b",), ("link",), ("sub", "c")))
        self.assertEqual(out.offer.size, 70013)
        self.assertEqual(out.offer.folders, (("emptydir",),))
        self.assertRaises(S.TransferError, S.prepare, os.path.join(self.root, "nope"))

    def test_empty_folders(self):
        """Only the folders nothing else creates are listed: nested empty
        ones by their deepest path, a folder of empty folders through them;
        a peer without the feature gets an offer without them."""
        for rel in ("d/sub/e1", "d/only/x/y", "d/only/z"):
            os.makedirs(os.path.join(self.root, rel))
        out = S.prepare(os.path.join(self.root, "d"))
        self.assertEqual(out.offer.folders, (("emptydir",), ("only", "x", "y"), ("only", "z"),
                                             ("sub", "e1")))
        plain = S.without_folders(out)
        self.assertEqual((plain.offer.folders, plain.offer.files, plain.files),
                         ((), out.offer.files, out.files))
        self.assertEqual(S.without_folders(S.prepare(os.path.join(self.root, "f"))).offer.bytes,
                         10)

    def test_resume_point_directory(self):
        """An accept asking to resume a folder is checked against our files:
        the count and digest of whole files and the next file's prefix must
        all be ours; otherwise from the start, with the reason."""
        out = S.prepare(os.path.join(self.root, "d"))
        a, b = out.files[0], out.files[1]
        da = S.digest_of(a)
        prefix = S.prefix_hasher(b, 1000).digest()
        point, why = S.resume_point(out, M.OfferAccept(1000, prefix, 1, M.files_digest([da])))
        self.assertEqual((point.skip, point.offset, point.held, why), (1, 1000, 1003, None))
        self.assertEqual(point.hasher.digest(), prefix)
        cases = [(M.OfferAccept(1000, prefix, 1, M.files_digest([b"\x00" * 32])),
                  "not the ones offered now"),
                 (M.OfferAccept(1000, b"\x00" * 32, 1, M.files_digest([da])),
                  "is not what the receiver kept"),
                 (M.OfferAccept(0, prefix, 9, M.files_digest([da])), "more files"),
                 (M.OfferAccept(1000, prefix), "something else"),
                 (M.OfferAccept(70001, prefix, 1, M.files_digest([da])), "is not what")]
        for accept, reason in cases:
            point, why = S.resume_point(out, accept)
            self.assertIs(point, S.FROM_START)
            self.assertIn(reason, why)
        os.utime(a.path, ns=(0, 0))
        point, why = S.resume_point(out, M.OfferAccept(1000, prefix, 1, M.files_digest([da])))
        self.assertIn("changed", why)

    def test_stream_resumed_directory(self):
        """A Streamer resuming a folder skips the kept files; the first
        header it sends carries skip and offset, data starts there, the
        file's hash covers all of it."""
        out = S.prepare(os.path.join(self.root, "d"))
        b = out.files[1]
        hasher = S.prefix_hasher(b, 1000)
        clock, transport, sent, done = task.Clock(), FakeTransport(), [], []
        S.Streamer(clock, transport, out, lambda n, h: sent.append((n, h)),
                   lambda: done.append(True), self.fail,
                   resume=S.ResumePoint(1, 1000, hasher, 1003)).start()
        headers = [r for r in transport.records if isinstance(r, M.FileOffer)]
        self.assertEqual(headers[0], M.FileOffer("b", b.mtime_ns // 10 ** 9, 70000, 1000, 1,
                                                 mode=b.mode))
        self.assertEqual([(h.offset, h.skip) for h in headers[1:]], [(None, None)] * 2)
        self.assertEqual(sent[0], (70000, S.digest_of(b)))
        self.assertEqual(sum(len(r.data) for r in transport.records
                             if isinstance(r, M.FileData)), 69000 + 10 + 0)
        self.assertEqual(done, [True])

    def stream(self, path):
        clock = task.Clock()
        transport = FakeTransport()
        sent, failed, done = [], [], []
        out = S.prepare(path)
        self.started = []
        streamer = S.Streamer(clock, transport, out, lambda n, h: sent.append((n, h)),
                              lambda: done.append(True), failed.append,
                              file_started=lambda *started: self.started.append(started))
        return clock, transport, streamer, sent, failed, done

    def test_stream_directory(self):
        """Every file: a FileOffer header (file_started says which file
        begins), data records of at most 65535 bytes, then file_sent with
        its size and BLAKE2b; all_sent at the end."""
        clock, transport, streamer, sent, failed, done = self.stream(
            os.path.join(self.root, "d"))
        streamer.start()
        self.assertEqual(done, [True])
        headers = [r for r in transport.records if isinstance(r, M.FileOffer)]
        self.assertEqual([h.filename for h in headers], ["a", "b", "link", "c"])
        data = [r for r in transport.records if isinstance(r, M.FileData)]
        self.assertTrue(all(len(r.data) <= 65535 for r in data))
        with open(os.path.join(self.root, "d", "b"), "rb") as f:
            h = M.new_hash()
            h.update(f.read())
        self.assertEqual(sent[1], (70000, h.digest()))
        self.assertEqual([n for n, _ in sent], [3, 70000, 10, 0])
        self.assertEqual(self.started, [(("a",), 3, 0), (("b",), 70000, 0),
                                        (("link",), 10, 0), (("sub", "c"), 0, 0)])
        self.assertIsNone(transport.producer)

    def test_pause_resume(self):
        """pauseProducing stops the records; resumeProducing continues on
        the next reactor turn."""
        clock, transport, streamer, sent, failed, done = self.stream(
            os.path.join(self.root, "d", "b"))
        transport.write = lambda data: (transport.records.append(M.parse_record(data)),
                                        streamer.pauseProducing())
        streamer.start()
        self.assertEqual(len(transport.records), 1)
        streamer.resumeProducing()
        self.assertEqual(len(transport.records), 1)
        clock.advance(0)
        self.assertEqual(len(transport.records), 2)
        while not done:
            streamer.resumeProducing()
            clock.advance(0)
        self.assertEqual(sent[0][0], 70000)

    def test_file_changed_after_offer(self):
        """A file whose size or mtime changed since the offer aborts the
        send (SourceChanged), as does one that vanished."""
        for change in ("grow", "vanish", "touch"):
            clock, transport, streamer, sent, failed, done = self.stream(
                os.path.join(self.root, "d"))
            path = os.path.join(self.root, "d", "b")
            if change == "grow":
                with open(path, "ab") as f:
                    f.write(b"more")
            elif change == "vanish":
                os.rename(path, path + ".gone")
            else:
                st = os.stat(path)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
            streamer.start()
            self.assertEqual(done, [])
            self.assertEqual(len(failed), 1)
            self.assertIsInstance(failed[0], S.SourceChanged)
            self.assertEqual(len(sent), 1)  # "a" went, "b" did not
            self.assertIsNone(transport.producer)
            self.setUp_again(change)

    def test_resume_from_offset(self):
        """prefix_hasher gives the state after n bytes (None past the end or
        after a change); a Streamer started there sends only the rest and
        reports the whole file's hash."""
        path = os.path.join(self.root, "d", "b")
        out = S.prepare(path)
        with open(path, "rb") as f:
            data = f.read()
        hasher = S.prefix_hasher(out.files[0], 30000)
        self.assertEqual(hasher.digest(), hashlib.blake2b(data[:30000], digest_size=32).digest())
        self.assertIsNone(S.prefix_hasher(out.files[0], 70001))
        clock, transport, sent, failed, done = task.Clock(), FakeTransport(), [], [], []
        streamer = S.Streamer(clock, transport, out, lambda n, h: sent.append((n, h)),
                              lambda: done.append(True), failed.append,
                              resume=S.ResumePoint(0, 30000, hasher, 30000))
        streamer.start()
        self.assertEqual(b"".join(bytes(r.data) for r in transport.records), data[30000:])
        full = M.new_hash()
        full.update(data)
        self.assertEqual(sent, [(70000, full.digest())])
        os.utime(path, ns=(0, 0))
        self.assertIsNone(S.prefix_hasher(out.files[0], 10))

    def setUp_again(self, change):
        path = os.path.join(self.root, "d", "b")
        if change == "vanish":
            os.rename(path + ".gone", path)


class _Writes:
    """A subchannel that keeps each write as it is (under a FramedWriter)."""

    def __init__(self):
        self.written = []

    def write(self, data):
        self.written.append(bytes(data))

    def registerProducer(self, producer, streaming):
        pass

    def unregisterProducer(self):
        pass


class Packing(unittest.TestCase):
    """Framed records from the Streamer
    (docs/transfer-v2.md, "Per-record work"): each subchannel write fits
    one Noise message (_framing.BATCH_BYTES), a large file's data goes as
    full records, and small files fill the batches instead of leaving one
    short write before each full one."""

    def stream(self, sizes):
        root = os.path.abspath(self.mktemp())
        os.makedirs(root)
        contents = {}
        for i, size in enumerate(sizes):
            contents[f"f{i}"] = os.urandom(size)
            with open(os.path.join(root, f"f{i}"), "wb") as f:
                f.write(contents[f"f{i}"])
        t, done = _Writes(), []
        writer = F.FramedWriter(t)
        streamer = S.Streamer(task.Clock(), writer, S.prepare(root), lambda n, h: None,
                              lambda: done.append(True), self.fail)
        streamer.start()
        self.assertEqual(done, [True])
        records = [M.parse_record(r) for r in F.Deframer().feed(b"".join(t.written))]
        # the same bytes in the same order, however they were cut
        data = {}
        name = None
        for r in records:
            if isinstance(r, M.FileOffer):
                name = r.filename
                data[name] = b""
            else:
                data[name] += bytes(r.data)
        self.assertEqual(data, contents)
        return t.written, records

    def test_small_files_fill_batches(self):
        """Six files of 100 KiB: every write but the last is full."""
        written, _ = self.stream([100 * 1024] * 6)
        self.assertEqual([len(w) for w in written[:-1]], [F.BATCH_BYTES] * 9)
        # 600 KiB and six headers in 10 writes, not the 18 of one short
        # write before each full one
        self.assertEqual(len(written), 10)

    def test_large_file_full_records(self):
        """After the first, which fills the batch its header began, a
        file's data goes in full records, each write one record."""
        written, records = self.stream([4 * S.DATA_CHUNK])
        data = [len(r.data) for r in records if isinstance(r, M.FileData)]
        self.assertEqual(len(written[0]), F.BATCH_BYTES)
        self.assertEqual(data[1:4], [S.DATA_CHUNK] * 3)
        self.assertEqual([len(w) for w in written[1:4]], [F.BATCH_BYTES] * 3)
        self.assertEqual(sum(data), 4 * S.DATA_CHUNK)
