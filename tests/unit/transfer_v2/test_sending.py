"""The offering side's machine (transfer_v2._sending) with recording fakes:
offer, accept and reject, both acknowledgements, mismatches, cancels and
protocol errors."""
from twisted.internet import defer
from twisted.trial import unittest

from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2._sending import AcknowledgeMismatch, OfferLost, OfferRejected, OfferResult
from wormhole.transfer_v2._source import FROM_START, ResumePoint, SourceChanged

from . import _machines as machines

H1, H2 = b"\x01" * 32, b"\x02" * 32
OFFER = M.DirectoryOffer("d", 5, [["a"], ["b"]])


class FakeStreamer:
    def __init__(self, events):
        self.events = events

    def stop(self):
        self.events.append("stop")


class Sending(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.results = []
        self.s = machines.sender(OFFER, lambda b: self.events.append(M.parse_record(b)),
                             lambda: self.events.append("close"), self._stream,
                             self.results.append)

    def _stream(self, resume=None):
        self.events.append("stream")
        return FakeStreamer(self.events)

    def rec(self, record):
        self.s.got_record(M.encode_record(record))

    def test_happy_path_both_acks(self):
        """Offer on connect; stream on accept; our ack per file; close and
        succeed once the peer's matching acks came for every file."""
        self.s.connected()
        self.assertEqual(self.events, [OFFER])
        self.rec(M.OfferAccept())
        self.assertEqual(self.events[-1], "stream")
        self.s.file_sent(2, H1)
        self.rec(M.FileAcknowledge(2, H1))  # the peer's ack may come while streaming
        self.s.file_sent(3, H2)
        self.s.all_sent()
        self.assertEqual(self.results, [])
        self.rec(M.FileAcknowledge(3, H2))
        self.assertEqual(self.events[2:], [M.FileAcknowledge(2, H1), M.FileAcknowledge(3, H2),
                                           "close"])
        self.assertEqual(self.results, [OfferResult(2, 5)])
        self.s.lost()  # the close we caused changes nothing
        self.assertEqual(len(self.results), 1)

    def test_reject(self):
        """An OfferReject closes the subchannel and fails with the peer's reason."""
        self.s.connected()
        self.rec(M.OfferReject("no room"))
        self.assertEqual(self.events[1:], ["close"])
        self.assertIsInstance(self.results[0], OfferRejected)
        self.assertEqual(self.results[0].reason, "no room")

    def test_mismatching_ack(self):
        """A peer ack with another hash stops streaming and fails."""
        self.s.connected()
        self.rec(M.OfferAccept())
        self.s.file_sent(2, H1)
        self.rec(M.FileAcknowledge(2, H2))
        self.assertEqual(self.events[-2:], ["stop", "close"])
        self.assertIsInstance(self.results[0], AcknowledgeMismatch)

    def test_ack_before_file_sent(self):
        """An acknowledgement for a file we have not finished is a protocol error."""
        self.s.connected()
        self.rec(M.OfferAccept())
        self.rec(M.FileAcknowledge(2, H1))
        self.assertIsInstance(self.results[0], M.MessageError)
        self.assertEqual(self.events[-2:], ["stop", "close"])

    def test_cancel_by_receiver(self):
        """An OfferReject after the accept is the receiver cancelling."""
        self.s.connected()
        self.rec(M.OfferAccept())
        self.rec(M.OfferReject("bored"))
        self.assertEqual(self.events[-2:], ["stop", "close"])
        self.assertEqual(self.results[0].reason, "bored")

    def test_unexpected_records(self):
        """Offers, data, unknown kinds or a second accept from the receiving
        side are protocol errors: close and fail."""
        for bad in [M.encode_record(M.FileOffer("a", 0, 1)), M.encode_record(M.FileData(b"x")),
                    b"\x09hello", b""]:
            self.setUp()
            self.s.connected()
            self.s.got_record(bad)
            self.assertEqual(self.events[-1], "close")
            self.assertIsInstance(self.results[0], M.MessageError)
        self.setUp()
        self.s.connected()
        self.rec(M.OfferAccept())
        self.rec(M.OfferAccept())
        self.assertIsInstance(self.results[0], M.MessageError)

    def test_source_changed(self):
        """A file changed after the offer: close and fail with SourceChanged."""
        self.s.connected()
        self.rec(M.OfferAccept())
        self.s.source_failed(SourceChanged("b changed"))
        self.assertEqual(self.events[-1], "close")
        self.assertIsInstance(self.results[0], SourceChanged)

    def test_lost_in_every_state(self):
        """The subchannel closing before completion fails with OfferLost."""
        for steps in ([], ["connected"], ["connected", "accept"],
                      ["connected", "accept", "sent", "all"]):
            self.setUp()
            for step in steps:
                if step == "connected":
                    self.s.connected()
                elif step == "accept":
                    self.rec(M.OfferAccept())
                elif step == "sent":
                    self.s.file_sent(2, H1)
                else:
                    self.s.all_sent()
            self.s.lost()
            self.assertIsInstance(self.results[0], OfferLost, steps)

    def test_cancel_by_us(self):
        """cancel() closes the subchannel and fails the offer once."""
        self.s.connected()
        self.rec(M.OfferAccept())
        self.s.cancel("session closed")
        self.s.cancel("again")
        self.assertEqual(self.events[-2:], ["stop", "close"])
        self.assertEqual(len(self.results), 1)
        self.assertIsInstance(self.results[0], OfferLost)


class ResumingSender(unittest.TestCase):
    """The "resume" feature on the offering side."""

    def setUp(self):
        self.events = []
        self.results = []
        self.streams = []
        self.prefix = M.new_hash()
        self.prefix.update(b"abcd")
        self.s = machines.sender(M.FileOffer("f", 7, 10),
                                 lambda b: self.events.append(M.parse_record(b)),
                             lambda: self.events.append("close"), self._stream,
                             self.results.append, self._resume_point)
        self.s.connected()

    def _resume_point(self, accept):
        # _source.resume_point's contract (its own test is in test_source)
        if (accept.resume_offset, accept.resume_hash) == (4, self.prefix.digest()):
            return defer.succeed((ResumePoint(0, 4, self.prefix.copy(), 4), None))
        return defer.succeed((FROM_START, "not ours"))

    def _stream(self, resume=None):
        self.streams.append((resume.offset, resume.hasher and resume.hasher.copy().digest())
                            if resume else (0, None))
        return FakeStreamer(self.events)

    def test_matching_prefix(self):
        """The receiver's prefix hash matches ours: a header at its offset,
        streaming from there with the prefix already hashed."""
        self.s.got_record(M.encode_record(M.OfferAccept(4, self.prefix.digest())))
        self.assertEqual(self.events[-1], M.FileOffer("f", 7, 10, 4))
        self.assertEqual(self.streams, [(4, self.prefix.digest())])
        self.s.file_sent(10, H1)
        self.s.all_sent()
        self.s.got_record(M.encode_record(M.FileAcknowledge(10, H1)))
        self.assertEqual(self.results, [OfferResult(1, 10, 4)])
        self.assertIsNone(self.results[0].resume_refused)

    def test_other_prefix(self):
        """A prefix that is not ours (or longer than our file): from 0."""
        for accept in (M.OfferAccept(4, H2), M.OfferAccept(99, H1)):
            self.setUp()
            self.s.got_record(M.encode_record(accept))
            self.assertEqual(self.events[-1], M.FileOffer("f", 7, 10, 0))
            self.assertEqual(self.streams, [(0, None)])

    def test_without_the_feature(self):
        """Without the feature a resume request is a plain accept."""
        s = machines.sender(M.FileOffer("f", 7, 10), self.events.append, lambda: None,
                        self._stream, self.results.append)
        s.connected()
        s.got_record(M.encode_record(M.OfferAccept(4, self.prefix.digest())))
        self.assertEqual(self.streams, [(0, None)])


class CheckingResume(unittest.TestCase):
    """The offering side waits in S1b_checking_resume while the receiver's
    kept bytes are hashed (a Deferred the test fires by hand)."""

    def setUp(self):
        self.events, self.results, self.checks, self.cancelled = [], [], [], []
        self.s = machines.sender(M.FileOffer("f", 7, 10),
                                 lambda b: self.events.append(M.parse_record(b)),
                             lambda: self.events.append("close"), self._stream,
                             self.results.append, self._check)
        self.s.connected()
        self.s.got_record(M.encode_record(M.OfferAccept(4, H1)))

    def _check(self, accept):
        d = defer.Deferred(lambda d: self.cancelled.append(accept))
        self.checks.append(d)
        return d

    def _stream(self, resume=None):
        self.events.append(("stream", resume.offset))
        return FakeStreamer(self.events)

    def test_answer_waits_for_the_hash(self):
        """Nothing is sent or streamed until the check fires; then the
        header at the agreed offset and the stream from there."""
        self.assertEqual(self.events, [M.FileOffer("f", 7, 10)])
        point = ResumePoint(0, 4, M.new_hash(), 4)
        self.checks[0].callback((point, None))
        self.assertEqual(self.events[1:], [M.FileOffer("f", 7, 10, 4), ("stream", 4)])

    def test_offer_ends_while_hashing(self):
        """Lost, cancelled or rejected while the hash runs: the hash is
        cancelled, the offer fails once, and nothing streams."""
        for end, error in ((lambda: self.s.lost(), OfferLost),
                           (lambda: self.s.cancel("bye"), OfferLost),
                           (lambda: self.s.got_record(M.encode_record(M.OfferReject("no"))),
                            OfferRejected),
                           (lambda: self.s.got_record(M.encode_record(M.OfferAccept())),
                            M.MessageError)):
            self.setUp()
            end()
            self.assertEqual(len(self.cancelled), 1)
            self.assertEqual(len(self.results), 1)
            self.assertIsInstance(self.results[0], error)
            self.assertNotIn(("stream", 4), self.events)

    def test_check_fails(self):
        """A hash that fails (not cancelled) fails the offer with its error."""
        self.checks[0].errback(SourceChanged("unreadable"))
        self.assertIsInstance(self.results[0], SourceChanged)
        self.assertEqual(self.events[-1], "close")
