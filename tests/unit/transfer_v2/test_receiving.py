"""The receiving side's machine (transfer_v2._receiving) with the real
sinks in a temporary folder: accept and reject, files and directories,
both acknowledgements, hash mismatch (bytes deleted), headers out of
order, too many bytes, late decisions, unknown record kinds."""
import os

from twisted.internet import defer, task
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._landing import BadName
from wormhole.transfer_v2 import _api, _resumable, _shells, _sink, _source, _versions
from wormhole.transfer_v2 import _interfaces as I
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2._receiving import (
    HashMismatch,
    OfferReceiver,
    Received,
    ReceiveFailed,
    Rejected,
)

from . import _machines as machines


def digest(data):
    h = M.new_hash()
    h.update(data)
    return h.digest()


def plenty(path):
    return 10 ** 12


class Receiving(unittest.TestCase):
    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)
        self.events = []
        self.results = []
        self.asked = []
        self.progress = []
        self.started = []
        self.r = machines.receiver(lambda b: self.events.append(M.parse_record(b)),
                               lambda: self.events.append("close"), self.asked.append,
                               self.progress.append, self.results.append,
                               file_started=lambda *started: self.started.append(started))

    def rec(self, record):
        self.r.got_record(M.encode_record(record))

    def accept(self):
        self.r.accept(_sink.sink_for(self.asked[0], self.dir, plenty))

    def listing(self):
        return sorted(os.listdir(self.dir))

    def test_file(self):
        """A file offer: ask, accept, data, the sender's ack, then ours; the
        file appears under its name only after the acks matched; success
        once the offering side closes."""
        data = b"hello world" * 100
        self.rec(M.FileOffer("greeting.txt", 1700000000, len(data)))
        self.assertEqual(self.asked, [M.FileOffer("greeting.txt", 1700000000, len(data))])
        self.accept()
        self.assertEqual(self.events, [M.OfferAccept()])
        self.rec(M.FileData(data[:500]))
        self.rec(M.FileData(data[500:]))
        self.assertNotIn("greeting.txt", self.listing())
        self.assertEqual(self.events, [M.OfferAccept()])  # no ack before the sender's
        self.rec(M.FileAcknowledge(len(data), digest(data)))
        self.assertEqual(self.events[1:], [M.FileAcknowledge(len(data), digest(data))])
        self.assertEqual(self.listing(), ["greeting.txt"])
        self.assertEqual(self.results, [])
        self.r.lost()
        self.assertEqual(self.results, [Received(self.asked[0],
                                                 os.path.join(os.path.abspath(self.dir),
                                                              "greeting.txt"), 1, len(data))])
        self.assertEqual(sum(self.progress), len(data))

    def test_directory(self):
        """A directory offer: each file after its header, in order (each
        header says which file begins); the folder appears (renamed from a
        temporary one) after the last ack."""
        files = {("a",): b"AAA", ("sub", "b"): b"BB"}
        offer = M.DirectoryOffer("d", 5, [list(p) for p in files])
        self.rec(offer)
        self.accept()
        for path, data in files.items():
            self.rec(M.FileOffer(path[-1], 0, len(data)))
            self.rec(M.FileData(data))
            self.assertNotIn("d", self.listing())
            self.rec(M.FileAcknowledge(len(data), digest(data)))
        self.assertEqual(self.listing(), ["d"])
        with open(os.path.join(self.dir, "d", "sub", "b"), "rb") as f:
            self.assertEqual(f.read(), b"BB")
        self.r.lost()
        self.assertEqual((self.results[0].files, self.results[0].bytes), (2, 5))
        self.assertEqual(self.started, [(("a",), 3, 0), (("sub", "b"), 2, 0)])

    def test_modes(self):
        """The files and folders of a received folder, resumable or not,
        get what open() and mkdir() would give them (less the umask), as
        classic's unpacker gives them; a received file too."""
        from wormhole._landing import default_mode
        for resumable in (False, True):
            self.setUp()
            files = {("a",): b"A", ("sub", "b"): b"B"}
            self.rec(M.DirectoryOffer("d", 2, [list(p) for p in files]))
            self.r.accept(_sink.sink_for(self.asked[0], self.dir, plenty, resumable=resumable))
            for path, data in files.items():
                self.rec(M.FileOffer(path[-1], 0, len(data)))
                self.rec(M.FileData(data))
                self.rec(M.FileAcknowledge(len(data), digest(data)))
            for parts, mode in ((("d",), 0o777), (("d", "sub"), 0o777), (("d", "a"), 0o666),
                                (("d", "sub", "b"), 0o666)):
                st = os.stat(os.path.join(self.dir, *parts))
                self.assertEqual(st.st_mode & 0o777, default_mode(mode), (resumable, parts))
            self.setUp()
            self.rec(M.FileOffer("f", 0, 1))
            self.r.accept(_sink.sink_for(self.asked[0], self.dir, plenty, resumable=resumable))
            self.rec(M.FileData(b"x"))
            self.rec(M.FileAcknowledge(1, digest(b"x")))
            st = os.stat(os.path.join(self.dir, "f"))
            self.assertEqual(st.st_mode & 0o777, default_mode(0o666), resumable)

    def test_empty_directory_offer(self):
        """A directory offer with no files completes as an empty folder."""
        self.rec(M.DirectoryOffer("empty", 0, []))
        self.accept()
        self.r.lost()
        self.assertEqual(self.listing(), ["empty"])
        self.assertIsInstance(self.results[0], Received)

    def test_hash_mismatch_deletes(self):
        """A sender ack with another hash: our ack still goes out (with our
        hash), the bytes are deleted, the application is told."""
        self.rec(M.FileOffer("f", 0, 3))
        self.accept()
        self.rec(M.FileData(b"abc"))
        self.rec(M.FileAcknowledge(3, digest(b"abd")))
        self.assertEqual(self.events[1:], [M.FileAcknowledge(3, digest(b"abc")), "close"])
        self.assertIsInstance(self.results[0], HashMismatch)
        self.assertIn("deleted", str(self.results[0]))
        self.assertEqual(self.listing(), [])

    def test_short_file(self):
        """An ack before all announced bytes came is a mismatch: deleted."""
        self.rec(M.FileOffer("f", 0, 4))
        self.accept()
        self.rec(M.FileData(b"abc"))
        self.rec(M.FileAcknowledge(3, digest(b"abc")))
        self.assertIsInstance(self.results[0], HashMismatch)
        self.assertEqual(self.listing(), [])

    def test_directory_mismatch_deletes_everything(self):
        """A mismatch on the second file of a directory removes the whole
        temporary folder, the verified first file included."""
        self.rec(M.DirectoryOffer("d", 4, [["a"], ["b"]]))
        self.accept()
        self.rec(M.FileOffer("a", 0, 2))
        self.rec(M.FileData(b"aa"))
        self.rec(M.FileAcknowledge(2, digest(b"aa")))
        self.rec(M.FileOffer("b", 0, 2))
        self.rec(M.FileData(b"bb"))
        self.rec(M.FileAcknowledge(2, digest(b"XX")))
        self.assertIsInstance(self.results[0], HashMismatch)
        self.assertEqual(self.listing(), [])

    def test_reject(self):
        """reject() sends OfferReject with the reason; nothing is written."""
        self.rec(M.FileOffer("f", 0, 3))
        self.r.reject("no thanks")
        self.assertEqual(self.events, [M.OfferReject("no thanks")])
        self.assertEqual(self.results, [Rejected(self.asked[0], "no thanks")])
        self.assertEqual(self.listing(), [])

    def test_existing_target_refused(self):
        """The sink refuses an existing name (the classic rule): rejected."""
        with open(os.path.join(self.dir, "f"), "wb") as f:
            f.write(b"mine")
        self.rec(M.FileOffer("f", 0, 3))
        self.assertRaises(_sink.Refused, _sink.sink_for, self.asked[0], self.dir, plenty)
        self.assertRaises(_sink.Refused, _sink.sink_for, M.FileOffer("g", 0, 100), self.dir,
                          lambda p: 99)

    def test_protocol_errors(self):
        """Too many bytes, data before accept, a header out of order, a
        second offer, an ack before any data, unknown kinds: closed, failed,
        nothing kept."""
        cases = [
            (M.FileOffer("f", 0, 2), True, [M.FileData(b"abc")]),
            (M.FileOffer("f", 0, 2), False, [M.FileData(b"ab")]),
            (M.DirectoryOffer("d", 2, [["a"], ["b"]]), True, [M.FileOffer("b", 0, 1)]),
            (M.DirectoryOffer("d", 2, [["a"]]), True, [M.FileOffer("a", 0, 3)]),
            (M.DirectoryOffer("d", 2, [["a"], ["b"]]), True,
             [M.FileOffer("a", 0, 1), M.FileOffer("b", 0, 1)]),
            (M.FileOffer("f", 0, 2), True, [M.FileOffer("f", 0, 2)]),
            (M.DirectoryOffer("d", 2, [["a"]]), True, [M.FileAcknowledge(0, b"\x00" * 32)]),
            (M.FileOffer("f", 0, 2), True, [M.OfferAccept()]),
            (M.FileOffer("f", 0, 2), True, [M.OfferReject("x")]),
        ]
        for offer, accept, records in cases:
            self.setUp()
            self.rec(offer)
            if accept:
                self.accept()
            for record in records:
                self.rec(record)
            self.assertEqual(self.events[-1], "close", (offer, records))
            self.assertIsInstance(self.results[0], ReceiveFailed, (offer, records))
            self.assertEqual(self.listing(), [])
        self.setUp()
        self.r.got_record(b"\x07\x00")
        self.assertIsInstance(self.results[0], ReceiveFailed)
        self.assertIn("unknown record kind 7", str(self.results[0]))

    def test_lost_midway_deletes(self):
        """The subchannel closing mid-file deletes the bytes and fails."""
        self.rec(M.DirectoryOffer("d", 4, [["a"], ["b"]]))
        self.accept()
        self.rec(M.FileOffer("a", 0, 2))
        self.rec(M.FileData(b"a"))
        self.r.lost()
        self.assertIsInstance(self.results[0], ReceiveFailed)
        self.assertEqual(self.listing(), [])

    def test_late_decision(self):
        """A decision after the subchannel was lost gives its sink back
        (the temporary folder goes away)."""
        self.rec(M.DirectoryOffer("d", 0, [["a"]]))
        self.r.lost()
        self.accept()
        self.assertEqual(self.listing(), [])
        self.assertEqual(len(self.results), 1)

    def test_cancel_while_receiving(self):
        """cancel() mid-file tells the sender (an OfferReject), deletes, fails."""
        self.rec(M.FileOffer("f", 0, 3))
        self.accept()
        self.rec(M.FileData(b"a"))
        self.r.cancel("bored")
        self.assertEqual(self.events[-1], M.OfferReject("bored"))
        self.assertEqual(self.listing(), [])
        self.assertIn("bored", str(self.results[0]))


class Resuming(unittest.TestCase):
    """The "resume" feature on the receiving side, with the real resumable sink."""

    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)
        self.data = os.urandom(10_000)
        self.offer = M.FileOffer("big", 1700000000, len(self.data))

    def receiver(self, **kw):
        events, results = [], []
        r = machines.receiver(lambda b: events.append(M.parse_record(b)),
                          lambda: events.append("close"), lambda offer: None,
                          lambda n: None, results.append, **kw)
        r.got_record(M.encode_record(self.offer))
        return r, events, results

    def sink(self):
        return _sink.sink_for(self.offer, self.dir, plenty, resumable=True)

    def interrupted_at(self, n):
        """A first session that got ``n`` bytes, then lost its subchannel."""
        r, events, results = self.receiver()
        r.accept(self.sink())
        self.assertEqual(events, [M.OfferAccept()])
        r.got_record(M.encode_record(M.FileData(self.data[:n])))
        r.lost()
        self.assertIsInstance(results[0], ReceiveFailed)
        self.assertEqual(len(os.listdir(self.dir)), 2)  # the bytes and the state file

    def test_resume(self):
        """Bytes kept after a lost subchannel are offered back with their
        hash; the sender's header at that offset continues the file (and
        ``resumed`` says the 4000 bytes are kept); both acks cover the
        whole file; nothing is left but the file."""
        self.interrupted_at(4000)
        resumed = []
        r, events, results = self.receiver(resumed=resumed.append)
        sink = self.sink()
        r.accept(sink)
        self.assertEqual((sink.resume.offset, sink.resume.bytes), (4000, 4000))
        self.assertEqual(events, [M.OfferAccept(4000, digest(self.data[:4000]))])
        r.got_record(M.encode_record(M.FileOffer("big", 1700000000, len(self.data), 4000)))
        self.assertEqual(resumed, [4000])
        r.got_record(M.encode_record(M.FileData(self.data[4000:])))
        r.got_record(M.encode_record(M.FileAcknowledge(len(self.data), digest(self.data))))
        self.assertEqual(events[-1], M.FileAcknowledge(len(self.data), digest(self.data)))
        r.lost()
        self.assertIsInstance(results[0], Received)
        self.assertEqual(os.listdir(self.dir), ["big"])
        with open(os.path.join(self.dir, "big"), "rb") as f:
            self.assertEqual(f.read(), self.data)

    def test_sender_says_from_zero(self):
        """The sender's prefix differs (offset 0 in its header): the kept
        bytes are discarded (``resumed`` says none are kept), the file
        comes in full, the reason is kept."""
        self.interrupted_at(4000)
        resumed = []
        r, events, results = self.receiver(resumed=resumed.append)
        sink = self.sink()
        r.accept(sink)
        r.got_record(M.encode_record(M.FileOffer("big", 1700000000, len(self.data), 0)))
        self.assertEqual(resumed, [0])
        r.got_record(M.encode_record(M.FileData(self.data)))
        r.got_record(M.encode_record(M.FileAcknowledge(len(self.data), digest(self.data))))
        r.lost()
        self.assertIsInstance(results[0], Received)
        self.assertIn("no longer starts with", sink.discarded)
        self.assertEqual(os.listdir(self.dir), ["big"])

    def test_other_version_discarded(self):
        """Kept bytes of another version (size or timestamp differ) are
        discarded before asking: a plain accept, and the reason is kept."""
        self.interrupted_at(4000)
        self.offer = M.FileOffer("big", 1700000001, len(self.data))
        sink = self.sink()
        sink.check_kept()
        self.assertIsNone(sink.resume)
        self.assertIn("another version", sink.discarded)
        self.assertEqual(os.listdir(self.dir), [])

    def test_bad_resume_answers(self):
        """An answer at another offset, or for another file, is refused
        (the kept bytes stay for a later try)."""
        for header in (M.FileOffer("big", 1700000000, len(self.data), 10),
                       M.FileOffer("other", 1700000000, len(self.data), 4000),
                       M.FileData(b"x")):
            self.setUp()
            self.interrupted_at(4000)
            r, events, results = self.receiver()
            r.accept(self.sink())
            r.got_record(M.encode_record(header))
            self.assertIsInstance(results[0], ReceiveFailed)
            self.assertEqual(len(os.listdir(self.dir)), 2)

    def test_mismatch_after_resume_deletes(self):
        """A hash mismatch after resuming deletes the kept bytes too."""
        self.interrupted_at(4000)
        r, events, results = self.receiver()
        r.accept(self.sink())
        r.got_record(M.encode_record(M.FileOffer("big", 1700000000, len(self.data), 4000)))
        r.got_record(M.encode_record(M.FileData(self.data[4000:])))
        r.got_record(M.encode_record(M.FileAcknowledge(len(self.data), b"\x00" * 32)))
        self.assertIsInstance(results[0], HashMismatch)
        self.assertEqual(os.listdir(self.dir), [])

    def checking(self):
        """A second session whose check of the kept bytes the test fires."""
        self.interrupted_at(4000)
        checks, cancelled = [], []

        def run(work):
            checks.append((work, defer.Deferred(lambda d: cancelled.append(work))))
            return checks[-1][1]
        r, events, results = self.receiver(run_hashing=run)
        sink = self.sink()
        r.accept(sink)
        return r, events, results, sink, checks, cancelled

    def test_answer_waits_for_the_check(self):
        """No answer goes out while the kept bytes are hashed (in
        R7_checking_kept); once the check ran, the resume request."""
        r, events, results, sink, checks, cancelled = self.checking()
        self.assertEqual(events, [])
        work, d = checks[0]
        d.callback(work(lambda: False))
        self.assertEqual(events, [M.OfferAccept(4000, digest(self.data[:4000]))])

    def test_offer_ends_while_checking(self):
        """Cancelled or lost while the kept bytes are hashed: the hash is
        cancelled, the offer ends once (the peer hears a reject when we
        cancel), and the kept bytes stay for a later session."""
        for end, peer_hears, result in ((lambda r: r.cancel("bye"), [M.OfferReject("bye")],
                                         Rejected),
                                        (lambda r: r.lost(), [], ReceiveFailed),
                                        (lambda r: r.got_record(M.encode_record(self.offer)),
                                         ["close"], ReceiveFailed)):
            self.setUp()
            r, events, results, sink, checks, cancelled = self.checking()
            end(r)
            self.assertEqual(len(cancelled), 1)
            self.assertEqual(events, peer_hears)
            self.assertEqual(len(results), 1)
            self.assertIsInstance(results[0], result)
            self.assertEqual(len(os.listdir(self.dir)), 2)  # the bytes and the state file

    def test_check_fails(self):
        """A check that fails (not cancelled) rejects the offer with why;
        the kept bytes stay."""
        r, events, results, sink, checks, cancelled = self.checking()
        checks[0][1].errback(OSError("disk gone"))
        self.assertIsInstance(results[0], Rejected)
        self.assertIn("disk gone", events[0].reason)
        self.assertEqual(len(os.listdir(self.dir)), 2)


class UnusableNames(unittest.TestCase):
    """Names are the receiving rules' (wormhole._landing), judged when the
    offer is accepted, the same rule and message as classic receive: the
    offered name and every path of a directory offer, before anything is
    made, resumable or not."""

    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)

    def test_refused_before_anything_is_made(self):
        for bad in ("", ".", "..", "a/b", "a\\b", "x\x00", "a\x1b[2Jb", "bell\x07",
                    "invoice\u202egnp.exe", "n" * 300):
            offers = [M.FileOffer(bad, 0, 1), M.DirectoryOffer(bad, 1, [["f"]]),
                      M.DirectoryOffer("d", 1, [["sub", bad]]),
                      M.DirectoryOffer("d", 1, [["f"]], [[bad]])]
            for offer in offers:
                for resumable in (False, True):
                    e = self.assertRaises(BadName, _sink.sink_for, offer, self.dir, plenty,
                                          resumable=resumable)
                    self.assertIn("the sender offered an unusable name '", str(e))
                    self.assertIsInstance(e, _sink.Refused)
        self.assertEqual(os.listdir(self.dir), [])

    def test_long_paths(self):
        """A path longer than MAX_PATH_BYTES is refused (as a zip entry's)."""
        offer = M.DirectoryOffer("d", 1, [["x" * 200] * 21])
        e = self.assertRaises(BadName, _sink.sink_for, offer, self.dir, plenty)
        self.assertIn("longer than 4096 bytes", str(e))

    def test_other_name_chosen(self):
        """With a name of ours (-o) the offered one is not used, so not
        judged; the paths inside a folder still are."""
        sink = _sink.sink_for(M.FileOffer("a\x1b[2Jb", 0, 1), self.dir, plenty, name="mine")
        self.assertEqual(os.path.basename(sink.final_path), "mine")
        self.assertRaises(BadName, _sink.sink_for, M.DirectoryOffer("d", 1, [["\x07"]]),
                          self.dir, plenty, name="mine")


class LongNames(unittest.TestCase):
    """A 255-byte name (the most a file system allows) is received, kept
    for resume and resumed like any other: the hidden names beside it fit."""

    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)

    def test_kept_paths_fit_and_differ(self):
        """Names of kept bytes and state fit NAME_MAX, are the same for the
        same name, and differ for two long names with a common start."""
        a, b = "é" * 126 + "ab", "é" * 126 + "ac"  # 254 bytes each
        paths = {n: [_resumable.kept_path(self.dir, n, suffix)
                     for suffix in (_resumable.RESUME_SUFFIX, _resumable.STATE_SUFFIX)]
                 for n in (a, b)}
        for path in paths[a] + paths[b]:
            self.assertLessEqual(len(os.path.basename(path).encode("utf-8")), 255)
        self.assertEqual(paths[a], [_resumable.kept_path(self.dir, a, s)
                                    for s in (_resumable.RESUME_SUFFIX, _resumable.STATE_SUFFIX)])
        self.assertNotEqual(paths[a], paths[b])
        self.assertEqual(_resumable.kept_path(self.dir, "big", ".resume"),
                         os.path.join(self.dir, ".wormhole-partial-big.resume"))

    def test_resume_a_255_byte_name(self):
        """Interrupted and resumed under a 255-byte name: the file arrives whole."""
        name = "é" * 127 + "x"
        self.assertEqual(len(name.encode("utf-8")), 255)
        data = os.urandom(5000)
        offer = M.FileOffer(name, 1700000000, len(data))

        def receiver():
            events, results = [], []
            r = machines.receiver(lambda b: events.append(M.parse_record(b)), lambda: None,
                              lambda offer: None, lambda n: None, results.append)
            r.got_record(M.encode_record(offer))
            return r, events, results
        r, events, results = receiver()
        r.accept(_sink.sink_for(offer, self.dir, plenty, resumable=True))
        r.got_record(M.encode_record(M.FileData(data[:2000])))
        r.lost()
        r, events, results = receiver()
        sink = _sink.sink_for(offer, self.dir, plenty, resumable=True)
        r.accept(sink)
        self.assertEqual(events, [M.OfferAccept(2000, digest(data[:2000]))])
        r.got_record(M.encode_record(M.FileOffer(name, 1700000000, len(data), 2000)))
        r.got_record(M.encode_record(M.FileData(data[2000:])))
        r.got_record(M.encode_record(M.FileAcknowledge(len(data), digest(data))))
        r.lost()
        self.assertIsInstance(results[0], Received)
        self.assertEqual(os.listdir(self.dir), [name])

    def test_directory_with_a_255_byte_name(self):
        """A directory offer whose own name is 255 bytes gets a temporary
        folder that fits beside it."""
        name = "d" * 255
        sink = _sink.sink_for(M.DirectoryOffer(name, 1, [["f"]]), self.dir, plenty)
        self.assertTrue(os.path.isdir(sink._tmp))
        sink.abort()


class Interfaces(unittest.TestCase):
    """Every sink, its writers and the machine provide their interfaces
    (what ``accept`` and the machine rely on, without probing)."""

    def test_verified(self):
        folder = self.mktemp()
        os.makedirs(folder)
        offers = [M.FileOffer("f", 0, 1), M.DirectoryOffer("d", 1, [["a", "b"]])]
        for offer in offers:
            for resumable in (False, True):
                sink = _sink.sink_for(offer, folder, plenty, resumable=resumable)
                kind = I.IResumableSink if resumable else I.ISink
                if resumable:
                    sink.check_kept()
                self.assertTrue(verifyObject(kind, sink))
                self.assertEqual(I.IResumableSink.providedBy(sink), resumable)
                path = ("a", "b") if isinstance(offer, M.DirectoryOffer) else ("f",)
                writer = sink.open_file(path, M.FileOffer(path[-1], 0, 1))
                self.assertTrue(verifyObject(I.IWriter, writer))
                writer.abort()
                sink.abort()
        r = machines.receiver(lambda b: None, lambda: None, lambda offer: None,
                              lambda n: None, lambda result: None)
        self.assertTrue(verifyObject(I.IOfferReceiver, r))
        s = machines.sender(M.FileOffer("f", 0, 1), lambda b: None, lambda: None,
                            lambda resume: None, lambda result: None)
        self.assertTrue(verifyObject(I.IOfferSender, s))

    def test_neighbours_verified(self):
        """What the session wires to each machine (its offer protocols and
        their channel) and the tests' own neighbours provide the
        neighbours' interfaces."""
        session = _api.TransferSession(task.Clock(), None, "connect")
        session._agree(_versions.negotiate("connect", _versions.app_versions("connect")))
        incoming = session._offer_in()
        self.assertTrue(verifyObject(I.IOfferReceiverDelegate, incoming))
        self.assertTrue(verifyObject(I.IOfferChannel, _shells.Channel(incoming)))
        outgoing = session._offer_out(_source.Outgoing(M.FileOffer("f", 0, 0), []),
                                      defer.Deferred(), lambda n: None)
        self.assertTrue(verifyObject(I.IOfferSenderDelegate, outgoing))
        def one(value):
            return None
        self.assertTrue(verifyObject(I.IOfferChannel, machines.Channel(one, lambda: None)))
        self.assertTrue(verifyObject(I.IOfferReceiverDelegate,
                                     machines.ReceiverSide(one, one, one)))
        self.assertTrue(verifyObject(I.IOfferSenderDelegate, machines.SenderSide(one, one)))

    def test_wiring_checks_interfaces(self):
        """A neighbour that does not provide its interface fails at wiring."""
        r = OfferReceiver()
        self.assertRaises(TypeError, r.wire, object(), machines.ReceiverSide(None, None, None))
        self.assertRaises(TypeError, r.wire, machines.Channel(None, None), object())

    def test_accept_needs_a_sink(self):
        """A sink that is not one fails at accept, before anything is sent."""
        events = []
        r = machines.receiver(events.append, lambda: None, lambda offer: None,
                              lambda n: None, lambda result: None)
        r.got_record(M.encode_record(M.FileOffer("f", 0, 1)))
        self.assertRaises(TypeError, r.accept, object())
        self.assertEqual(events, [])
