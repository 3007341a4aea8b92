"""One offer, both machines together: the offering side (OfferSender and
the real Streamer over real files) and the receiving side (OfferReceiver
with the real sinks) wired back to back by an in-memory subchannel whose
records are delivered on a task.Clock. No network: the protocol itself,
for empty folders, resuming a directory offer in a new "session", a source
that changed, and bytes altered on the way."""
import os

import attr
from twisted.internet import task
from twisted.trial import unittest

from wormhole._landing import _nofollow
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _sink
from wormhole.transfer_v2 import _source as S
from wormhole.transfer_v2._hashing import never
from wormhole.transfer_v2._receiving import HashMismatch, Received, ReceiveFailed
from wormhole.transfer_v2._sending import AcknowledgeMismatch, OfferResult

from . import _machines as machines


def plenty(path):
    return 10 ** 12


def write_tree(root, files, folders=()):
    for rel, data in files.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    for rel in folders:
        os.makedirs(os.path.join(root, *rel.split("/")), exist_ok=True)


def read_tree(root):
    """{relative path: bytes} for files, {relative path/: None} for folders."""
    found = {}
    for dirpath, dirs, names in os.walk(root):
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for d in dirs:
            found[(d if rel == "." else f"{rel}/{d}") + "/"] = None
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                found[n if rel == "." else f"{rel}/{n}"] = f.read()
    return found


class _Transport:
    """The offering side's end of the subchannel: each write is one record,
    delivered to the other side on the next clock turn."""

    def __init__(self, link):
        self._link = link

    def write(self, data):
        self._link.send(self._link.receiver.got_record, bytes(data))

    def registerProducer(self, producer, streaming):
        pass

    def unregisterProducer(self):
        pass


class Link:
    """One offer subchannel between a sender and a receiver machine."""

    def __init__(self, clock, outgoing, folder, resumable=True, stop_after=None,
                 alter=None, accept=True, old_sender=False, old_receiver=False):
        self.clock = clock
        self.closed = False
        self.cut = False
        self.sent = 0          # data bytes the Streamer sent
        self.received = 0      # data bytes the receiver counted
        self.sender_result, self.receiver_result = [], []
        self._stop_after = stop_after
        self._alter = alter    # (record) -> record: what the wire does to data
        self._outgoing = outgoing
        self._accept = accept
        self._folder = folder
        self._resumable = resumable
        self.sink = None
        # each side's file_started calls: (path segments, size, offset)
        self.started = {"sender": [], "receiver": []}
        self.resumed = []  # the receiver's kept bytes, as the sender's headers say
        self.sender = machines.sender(
            outgoing.offer, lambda b: self.send(self.receiver.got_record, b), self.close,
            self._start_streaming, self.sender_result.append,
            (lambda accept: self._run_hashing(lambda cancelled: S.resume_point(
                outgoing, old(accept) if old_sender else accept, cancelled)))
            if resumable else None)
        # a peer that knows only the first version of the directory resume
        # (all or nothing): its accept has no digests, or it ignores them
        self._old_receiver = old_receiver
        self.receiver = machines.receiver(
            lambda b: self.send(self.sender.got_record, b), self.close, self._ask,
            self._progress, self.receiver_result.append, run_hashing=self._run_hashing,
            file_started=lambda *started: self.started["receiver"].append(started),
            resumed=self.resumed.append)

    def _run_hashing(self, work):
        # the hash is ready on a later clock turn, as from a thread: both
        # machines wait for it (S1b_checking_resume, R7_checking_kept)
        return task.deferLater(self.clock, 0, work, never)

    def send(self, deliver, data):
        # what was written before a close still arrives; nothing after a cut
        if not self.closed:
            if self._alter is not None and deliver == self.receiver.got_record:
                data = self._alter(data)
            if self._old_receiver and deliver == self.sender.got_record:
                record = M.parse_record(data)
                if isinstance(record, M.OfferAccept):
                    data = M.encode_record(old(record))
            self.clock.callLater(0, lambda: self.cut or deliver(data))

    def close(self, cut=False):
        self.cut = self.cut or cut
        if not self.closed:
            self.closed = True
            self.clock.callLater(0, self.sender.lost)
            self.clock.callLater(0, self.receiver.lost)

    def _ask(self, offer):
        if not self._accept:
            return self.receiver.reject("no, thanks")
        self.sink = _sink.sink_for(offer, self._folder, plenty, resumable=self._resumable)
        self.receiver.accept(self.sink)

    def _progress(self, n):
        self.received += n
        if self._stop_after is not None and self.received >= self._stop_after:
            self._stop_after = None
            self.close(cut=True)  # the connection goes away mid-offer

    def _sent(self, n):
        self.sent += n

    def _start_streaming(self, resume=None):
        streamer = S.Streamer(self.clock, _Transport(self), self._outgoing,
                              self.sender.file_sent, self.sender.all_sent,
                              self.sender.source_failed, self._sent, resume,
                              lambda *started: self.started["sender"].append(started))
        streamer.start()
        return streamer

    def run(self):
        self.sender.connected()
        while self.clock.getDelayedCalls():
            self.clock.advance(0)
        return self


def old(accept):
    """An OfferAccept as a peer without the digests sends or reads it."""
    if accept.resume_digests is None:
        return accept
    return attr.evolve(accept, resume_digests=None)


class _Base(unittest.TestCase):
    def setUp(self):
        self.src = os.path.abspath(self.mktemp())
        self.dst = os.path.abspath(self.mktemp())
        os.makedirs(self.src)
        os.makedirs(self.dst)

    def offer(self, name="tree", **kw):
        return Link(task.Clock(), S.prepare(os.path.join(self.src, name)), self.dst, **kw).run()


class EmptyFolders(_Base):
    """The "empty-folders" feature between the two machines."""

    def test_tree_with_empty_folders(self):
        """Nested empty folders, a folder whose only content is empty
        folders, and files: the received tree is exactly the sent one."""
        files = {"a": b"A" * 70000, "sub/b": b"B", "sub/deep/c": b""}
        folders = ["empty", "sub/empty", "only-empties/x", "only-empties/y/z"]
        write_tree(os.path.join(self.src, "tree"), files, folders)
        link = self.offer()
        self.assertEqual(link.sender_result, [OfferResult(3, 70001)])
        self.assertIsInstance(link.receiver_result[0], Received)
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))
        self.assertEqual(os.listdir(self.dst), ["tree"])

    def test_only_empty_folders(self):
        """A folder holding only empty folders (no file at all) arrives."""
        write_tree(os.path.join(self.src, "tree"), {}, ["x/y", "z"])
        link = self.offer()
        self.assertEqual(link.sender_result, [OfferResult(0, 0)])
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         {"x/": None, "x/y/": None, "z/": None})

    def test_without_the_feature(self):
        """For a peer without the feature the offer carries no folders (the
        files still arrive, the empty folders do not)."""
        write_tree(os.path.join(self.src, "tree"), {"a": b"a"}, ["empty"])
        out = S.without_folders(S.prepare(os.path.join(self.src, "tree")))
        self.assertNotIn(b"folders", M.encode_record(out.offer))
        link = Link(task.Clock(), out, self.dst).run()
        self.assertIsInstance(link.receiver_result[0], Received)
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")), {"a": b"a"})


class DirectoryResume(_Base):
    """The "resume" feature for a directory offer: a first offer cut short,
    a second one (a new session) sends only what is missing."""

    def setUp(self):
        super().setUp()
        self.files = {"1": os.urandom(100_000), "2": os.urandom(200_000),
                      "3/x": os.urandom(50_000), "3/y": b""}
        write_tree(os.path.join(self.src, "tree"), self.files, ["3/empty"])
        self.total = sum(map(len, self.files.values()))

    def kept(self):
        return sorted(os.listdir(self.dst))

    def test_resume_mid_file(self):
        """Cut in the middle of the second file: the first file and the
        second's prefix stay (in the hidden folder, with the journal); the
        next offer skips the first, resumes the second at its offset, and
        the tree arrives exact with only the rest sent."""
        first = self.offer(stop_after=150_000)
        self.assertIsInstance(first.receiver_result[0], ReceiveFailed)
        self.assertEqual(self.kept(), [".wormhole-partial-tree.resume",
                                       ".wormhole-partial-tree.resume.json"])
        second = self.offer()
        held = second.sink.resume
        self.assertEqual(held.files, 1)
        self.assertGreaterEqual(held.bytes, 150_000)
        self.assertEqual(held.bytes, 100_000 + held.offset)
        result = second.sender_result[0]
        self.assertEqual((result.files, result.bytes), (4, self.total))
        self.assertEqual((result.resumed_from, result.resumed_files), (held.bytes, 1))
        self.assertEqual(second.sent, self.total - held.bytes)
        self.assertIsInstance(second.receiver_result[0], Received)
        self.assertEqual((second.receiver_result[0].files, second.receiver_result[0].bytes),
                         (4, self.total))
        self.assertEqual(self.kept(), ["tree"])
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))
        # each side saw the same files begin: the second from the offset,
        # then the rest whole; together exactly the bytes that were sent
        self.assertEqual(second.started["sender"], second.started["receiver"])
        self.assertEqual(second.started["sender"],
                         [(("2",), 200_000, held.offset), (("3", "x"), 50_000, 0),
                          (("3", "y"), 0, 0)])
        self.assertEqual(sum(size - offset for _, size, offset in second.started["sender"]),
                         second.sent)
        self.assertEqual(second.resumed, [held.bytes])

    def test_journal_opened_once(self):
        """The journal is opened once for all the files it records (issue
        25: not reopened per file), and what it recorded before a cut is
        what the next offer holds."""
        journal = os.path.join(self.dst, ".wormhole-partial-tree.resume.json")
        opened = []
        reopen = _nofollow.reopen

        def counting(path, *args, **kw):
            opened.append(path)
            return reopen(path, *args, **kw)
        self.patch(_nofollow, "reopen", counting)
        first = self.offer(stop_after=320_000)  # cut in "3/x", after "2"
        self.assertIsInstance(first.receiver_result[0], ReceiveFailed)
        self.assertEqual(opened.count(journal), 1)
        with open(journal, "rb") as f:
            self.assertEqual(len(f.read().splitlines()), 1 + 2)  # the offer, 2 files
        del opened[:]
        second = self.offer()
        self.assertEqual(second.sink.resume.files, 2)
        self.assertIsInstance(second.receiver_result[0], Received)
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))

    def test_resume_between_files(self):
        """Cut right after a file was verified: the next offer starts at the
        next file (offset 0), skipping the kept ones."""
        first = self.offer(stop_after=100_000)
        self.assertIsInstance(first.receiver_result[0], ReceiveFailed)
        second = self.offer()
        self.assertEqual(second.sent, self.total - second.sink.resume.bytes)
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))

    def test_all_files_kept(self):
        """Every file was verified but the folder not yet renamed (a kill
        between the last journal line and the rename): the next offer asks
        for the last file from its end, and nothing is sent again."""
        self.offer(stop_after=150_000)
        folder = os.path.join(self.dst, ".wormhole-partial-tree.resume")
        for rel in ("2", "3/x", "3/y"):
            write_tree(folder, {rel: self.files[rel]})
            h = M.new_hash()
            h.update(self.files[rel])
            with open(folder + ".json", "a") as f:
                f.write(f'{{"bytes": {len(self.files[rel])}, "hash": "{h.hexdigest()}"}}\n')
        second = self.offer()
        self.assertEqual((second.sink.resume.files, second.sink.resume.offset), (3, 0))
        self.assertEqual(second.sent, 0)
        self.assertEqual(second.sender_result[0].files, 4)
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))

    def change(self, rel, size):
        """Rewrite a source file (other bytes, a later mtime)."""
        path = os.path.join(self.src, "tree", *rel.split("/"))
        with open(path, "wb") as f:
            f.write(os.urandom(size))
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))

    def test_changed_source_with_a_first_version_peer(self):
        """A kept file changed at the source since (size, mtime, bytes) and
        one peer knows only the first version of the directory resume (no
        digests): the resume is refused with the reason, everything is
        sent again, the receiver says why it discarded its files."""
        for peer in ({"old_sender": True}, {"old_receiver": True}):
            self.setUp()
            self.offer(stop_after=150_000)
            self.change("1", 100_000)
            second = self.offer(**peer)
            result = second.sender_result[0]
            self.assertEqual(second.sent, self.total, peer)
            self.assertEqual((result.resumed_from, result.resumed_files), (0, 0))
            self.assertIn("not the ones offered now", result.resume_refused)
            self.assertIn("no longer matches", second.sink.discarded)
            self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                             read_tree(os.path.join(self.src, "tree")))

    def test_changed_partial_sent_again(self):
        """The partly received file's start changed at the source: that
        file is sent in full, the whole files kept before it are not (with
        a first-version peer: everything, as before)."""
        for peer, sent in (({}, self.total - 100_000), ({"old_sender": True}, self.total)):
            self.setUp()
            self.offer(stop_after=150_000)
            path = os.path.join(self.src, "tree", "2")
            with open(path, "r+b") as f:
                f.write(b"changed")
            second = self.offer(**peer)
            self.assertIn("is not what the receiver kept", second.sender_result[0].resume_refused)
            self.assertEqual(second.sent, sent)
            self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                             read_tree(os.path.join(self.src, "tree")))
            self.assertEqual(self.kept(), ["tree"])


    def test_tampered_state_discarded(self):
        """What the first session left is checked before use: a kept file
        altered, a link or a stray file in the hidden folder, or a damaged
        journal make the receiver discard it all (saying why) and take
        the offer in full."""
        def alter_kept():
            with open(os.path.join(folder, "1"), "r+b") as f:
                f.write(b"evil")

        def plant_link():
            os.symlink("/etc", os.path.join(folder, "3"))

        def stray_file():
            with open(os.path.join(folder, "stray"), "wb") as f:
                f.write(b"x")

        def damage_journal():
            with open(journal, "ab") as f:
                f.write(b'{"bytes": -1, "hash": "00"}\n')

        def other_offer():
            with open(journal, "r+b") as f:
                f.write(b"[")
        for tamper in (alter_kept, plant_link, stray_file, damage_journal, other_offer):
            self.setUp()
            self.offer(stop_after=150_000)
            folder = os.path.join(self.dst, ".wormhole-partial-tree.resume")
            journal = folder + ".json"
            tamper()
            second = self.offer()
            self.assertIsNone(second.sink.resume, tamper.__name__)
            self.assertIn("cannot be used", second.sink.discarded)
            self.assertEqual(second.sent, self.total)
            self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                             read_tree(os.path.join(self.src, "tree")), tamper.__name__)

    def test_other_version_of_the_folder(self):
        """Kept files of a folder whose file list changed (a file added) are
        discarded before asking: a plain accept, a full transfer."""
        self.offer(stop_after=150_000)
        write_tree(os.path.join(self.src, "tree"), {"4": b"new"})
        second = self.offer()
        self.assertIsNone(second.sink.resume)
        self.assertIn("another version", second.sink.discarded)
        self.assertEqual(second.sent, self.total + 3)

    def test_bad_answers_to_a_resume(self):
        """An answer the receiver did not ask for (other skip or offset,
        another file's name, data before the header) is a protocol error;
        the kept files stay for a later try."""
        self.offer(stop_after=150_000)
        out = S.prepare(os.path.join(self.src, "tree"))
        kept = sorted(os.listdir(self.dst))
        for header in (lambda held: M.FileOffer("2", 0, 200_000, held.offset, 0),
                       lambda held: M.FileOffer("2", 0, 200_000, 0, 1),
                       lambda held: M.FileOffer("3", 0, 200_000, held.offset, 1),
                       lambda held: M.FileOffer("x", 0, 50_000, 0, 2),
                       lambda held: M.FileData(b"x")):
            results, written = [], []
            r = machines.receiver(lambda b, w=written: w.append(M.parse_record(b)), lambda: None,
                              lambda offer: None, lambda n: None, results.append)
            r.got_record(M.encode_record(out.offer))
            sink = _sink.sink_for(out.offer, self.dst, plenty, resumable=True)
            r.accept(sink)
            self.assertEqual(written, [sink.resume.request()])
            r.got_record(M.encode_record(header(sink.resume)))
            self.assertIsInstance(results[0], ReceiveFailed)
            self.assertEqual(sorted(os.listdir(self.dst)), kept)
        self.assertIsInstance(self.offer().receiver_result[0], Received)

    def test_not_resumable_peer(self):
        """Without the feature nothing is kept: a cut offer leaves nothing
        behind, the next one is sent in full."""
        self.offer(stop_after=150_000, resumable=False)
        self.assertEqual(self.kept(), [])
        self.assertEqual(self.offer(resumable=False).sent, self.total)


class Failures(_Base):
    """What goes wrong between the two machines."""

    def setUp(self):
        super().setUp()
        write_tree(os.path.join(self.src, "tree"), {"a": os.urandom(1000), "b": b"bbb"})

    def test_hash_mismatch(self):
        """A data byte altered on the way: both acknowledgements are sent,
        they differ, the receiver deletes what arrived (also when resumable)
        and says so, the sender reports the mismatch."""
        def flip(record):
            if record[0] == M.KIND_FILE_DATA and len(record) > 10:
                return record[:5] + bytes([record[5] ^ 1]) + record[6:]
            return record
        for resumable in (False, True):
            self.setUp()
            link = self.offer(alter=flip, resumable=resumable)
            self.assertIsInstance(link.receiver_result[0], HashMismatch)
            self.assertIn("deleted", str(link.receiver_result[0]))
            self.assertIsInstance(link.sender_result[0], AcknowledgeMismatch)
            self.assertEqual(os.listdir(self.dst), [])

    def test_source_changed_after_offer(self):
        """A file of the directory changes between the offer and its turn to
        be sent: the sender stops with SourceChanged, closes, the receiver
        keeps nothing under a final name."""
        link = Link(task.Clock(), S.prepare(os.path.join(self.src, "tree")), self.dst,
                    resumable=False)
        with open(os.path.join(self.src, "tree", "b"), "ab") as f:
            f.write(b"more")
        link.run()
        self.assertIsInstance(link.sender_result[0], S.SourceChanged)
        self.assertIsInstance(link.receiver_result[0], ReceiveFailed)
        self.assertEqual(os.listdir(self.dst), [])

    def test_reject(self):
        """A rejected directory offer: nothing sent, nothing written, the
        sender has the reason."""
        link = self.offer(accept=False)
        self.assertEqual(link.sender_result[0].reason, "no, thanks")
        self.assertEqual((link.sent, os.listdir(self.dst)), (0, []))


# KeepingWhatMatches: files of two data records each; a cut after the
# first record of the fifth file
SIZE = 100_000
FIRST = S.DATA_CHUNK
CUT_IN_E = 4 * SIZE + 1


class KeepingWhatMatches(_Base):
    """A directory resume between peers that send and read the kept files'
    digests: kept files that changed at the source travel again, the
    others stay."""

    def setUp(self):
        super().setUp()
        self.files = {name: os.urandom(SIZE) for name in "abcdef"}
        write_tree(os.path.join(self.src, "tree"), self.files)
        self.total = 6 * SIZE

    def change(self, name):
        self.files[name] = os.urandom(SIZE)
        write_tree(os.path.join(self.src, "tree"), {name: self.files[name]})
        path = os.path.join(self.src, "tree", name)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))

    def check_tree(self):
        self.assertEqual(read_tree(os.path.join(self.dst, "tree")),
                         read_tree(os.path.join(self.src, "tree")))
        self.assertEqual(sorted(os.listdir(self.dst)), ["tree"])

    def test_only_changed_files_travel(self):
        """Cut in "e" with a-d kept; "b" and "d" changed: only they, the
        rest of "e" and "f" are sent; both sides count a and c as kept and
        say why the others came again."""
        self.offer(stop_after=CUT_IN_E)
        self.change("b")
        self.change("d")
        second = self.offer()
        held = second.sink.resume
        self.assertEqual((held.files, held.offset), (4, FIRST))
        self.assertEqual(second.sent, 2 * SIZE + (SIZE - FIRST) + SIZE)
        result = second.sender_result[0]
        self.assertEqual((result.files, result.bytes), (6, self.total))
        self.assertEqual((result.resumed_files, result.resumed_from), (2, 2 * SIZE + FIRST))
        self.assertIn("2 of the files the receiver kept changed", result.resume_refused)
        self.assertIn("2 of the files kept", second.sink.discarded)
        received = second.receiver_result[0]
        self.assertEqual((received.files, received.bytes), (6, self.total))
        self.check_tree()
        # the receiver's kept bytes follow the answer: a and c, then the
        # start of "e" once its header says it continues; in the end what
        # the sender says it did not send
        self.assertEqual(second.resumed, [2 * SIZE, 2 * SIZE + FIRST])
        self.assertEqual(second.resumed[-1], self.total - second.sent)
        # the changed files first, whole, then "e" from the offset and "f"
        self.assertEqual(second.started["sender"], second.started["receiver"])
        self.assertEqual(second.started["receiver"],
                         [(("b",), SIZE, 0), (("d",), SIZE, 0), (("e",), SIZE, FIRST),
                          (("f",), SIZE, 0)])

    def test_nothing_changed(self):
        """Nothing changed: the answer lists no file to send again, only
        the rest travels, nothing is reported."""
        self.offer(stop_after=CUT_IN_E)
        second = self.offer()
        self.assertEqual(second.sent, self.total - 4 * SIZE - FIRST)
        self.assertIsNone(second.sender_result[0].resume_refused)
        self.assertIsNone(second.sink.discarded)
        self.check_tree()

    def test_cut_while_changed_files_come_again(self):
        """The second session is cut while a changed file comes again: the
        journal still proves a prefix (the kept files after the changed
        one are not yet in it and go), and a third session completes the
        tree exactly."""
        self.offer(stop_after=CUT_IN_E)
        self.change("b")
        second = self.offer(stop_after=1)
        self.assertIsInstance(second.receiver_result[0], ReceiveFailed)
        third = self.offer()
        held = third.sink.resume
        self.assertEqual((held.files, held.offset), (1, FIRST))
        self.assertEqual(third.sent, self.total - held.bytes)
        self.assertIsInstance(third.receiver_result[0], Received)
        self.check_tree()

    def test_bad_keeping_answers(self):
        """A keeping answer the receiver cannot take (another skip, the
        wrong first file, an offset on a file sent again, one past our
        prefix) is a protocol error; the kept files stay."""
        self.offer(stop_after=CUT_IN_E)
        out = S.prepare(os.path.join(self.src, "tree"))
        kept = sorted(os.listdir(self.dst))
        for header in (M.FileOffer("a", 0, SIZE, 0, 3, [0]),
                       M.FileOffer("b", 0, SIZE, 0, 4, [0]),
                       M.FileOffer("a", 0, SIZE, 7, 4, [0]),
                       M.FileOffer("e", 0, SIZE, FIRST - 1, 4, []),
                       M.FileOffer("e", 0, 10 * SIZE, 0, 4, [])):
            results = []
            r = machines.receiver(lambda b: None, lambda: None, lambda offer: None,
                              lambda n: None, results.append)
            r.got_record(M.encode_record(out.offer))
            r.accept(_sink.sink_for(out.offer, self.dst, plenty, resumable=True))
            r.got_record(M.encode_record(header))
            self.assertIsInstance(results[0], ReceiveFailed, header)
            self.assertEqual(sorted(os.listdir(self.dst)), kept)
        self.offer()
        self.check_tree()

    def test_too_many_changed_means_all(self):
        """More changed kept files than MAX_RESEND (here 1): the answer is
        the all-or-nothing one, everything travels, the tree is exact."""
        self.patch(M, "MAX_RESEND", 1)
        self.offer(stop_after=CUT_IN_E)
        self.change("a")
        self.change("c")
        second = self.offer()
        self.assertEqual(second.sent, self.total)
        self.assertIn("2 of the files the receiver kept changed",
                      second.sender_result[0].resume_refused)
        self.assertIn("no longer matches", second.sink.discarded)
        self.check_tree()
