"""The glue of transfer_v2._api without a network (task.Clock, a fake
subchannel): what the session does with the peer's control messages and
offers, whatever the peer sends: unknown control kinds, offers a peer in
its mode may not make, attributes of features we did not declare."""
import os

import attr
import msgpack
from twisted.internet import defer, task
from twisted.trial import unittest

from wormhole.errors import TransferError
from wormhole.transfer_v2 import _api, _features, _hashing, _shells, _source
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _versions as V
from wormhole.transfer_v2._receiving import OfferAlreadyAnswered


class FakeSubchannel:
    def __init__(self):
        self.records = []
        self.closed = False

    def write(self, data):
        self.records.append(M.parse_record(data))

    def loseConnection(self):
        self.closed = True


def session(our_mode, their_mode, their_features=None, **kw):
    """A TransferSession as it is once negotiated (nothing dilated)."""
    s = _api.TransferSession(task.Clock(), None, our_mode, **kw)
    theirs = V.app_versions(their_mode, their_features)
    negotiated = V.negotiate(our_mode, theirs)
    # one record per write: these tests read the subchannel that way
    s._agree(attr.evolve(negotiated, features=negotiated.features
                         - {V.FRAMED_RECORDS, V.FILE_MODES}))
    return s


def offer_in(s, record):
    """The peer opens an offer subchannel and sends ``record``."""
    p = s._offer_in()
    p.transport = FakeSubchannel()
    p.connectionMade()
    p.dataReceived(M.encode_record(record))
    return p


class Control(unittest.TestCase):
    def test_unknown_control_kinds_ignored(self):
        """A control message of a kind we do not know (a later version's) is
        ignored, as is one that is not a msgpack map; texts still arrive."""
        texts = []
        s = session("connect", "connect", on_text=texts.append)
        s._got_control(msgpack.packb({"kind": "sticker", "png": b"x"}))
        s._got_control(b"\xc1garbage")
        s._got_control(M.encode_control(M.Text("hello")))
        self.assertEqual(texts, ["hello"])


class Totals(unittest.TestCase):
    def control(self, s):
        p = _shells.ControlProtocol(s._got_control, lambda: None)
        p.transport = FakeSubchannel()
        p.transport.write = lambda data: p.transport.records.append(M.parse_control(data))
        s._our_control = p
        return p.transport

    def test_both_declared(self):
        """Both declared "session-totals": announce_totals writes the
        control message, the peer's reaches on_totals."""
        got = []
        s = session("send", "receive", on_totals=lambda *totals: got.append(totals))
        ours = self.control(s)
        self.assertTrue(s.announce_totals(3, 6_000_000))
        self.assertEqual(ours.records, [M.SessionTotals(3, 6_000_000)])
        s._got_control(M.encode_control(M.SessionTotals(2, 10)))
        self.assertEqual(got, [(2, 10)])

    def test_peer_without_the_feature(self):
        """A peer that did not declare it gets nothing from
        announce_totals (False), and its totals, if it sends them anyway,
        are ignored (Dilated File Transfer, "Version Negotiation": only
        what both declared)."""
        got = []
        s = session("send", "receive", their_features={"resume": {}},
                    on_totals=lambda *totals: got.append(totals))
        ours = self.control(s)
        self.assertFalse(s.announce_totals(3, 6_000_000))
        self.assertEqual(ours.records, [])
        s._got_control(M.encode_control(M.SessionTotals(2, 10)))
        self.assertEqual(got, [])


class Modes(unittest.TestCase):
    def test_offer_from_a_peer_that_may_not_offer(self):
        """We send, the peer receives: an offer it makes anyway is rejected
        with the reason, before our application sees it."""
        asked = []
        s = session("send", "receive", on_offer=asked.append)
        p = offer_in(s, M.FileOffer("f", 0, 3))
        self.assertEqual(asked, [])
        self.assertEqual(len(p.transport.records), 1)
        self.assertIn("may not offer", p.transport.records[0].reason)

    def test_we_may_not_offer(self):
        """In receive mode offer() fails at once (nothing is opened)."""
        s = session("receive", "send")
        self.failureResultOf(s.offer(__file__), TransferError)

    def test_no_on_offer(self):
        """Without on_offer every offer is rejected."""
        p = offer_in(session("connect", "connect"), M.FileOffer("f", 0, 3))
        self.assertEqual(p.transport.records, [M.OfferReject("this peer does not accept offers")])


class Features(unittest.TestCase):
    def offered(self, their_features):
        asked = []
        s = session("receive", "send", their_features, on_offer=asked.append)
        offer_in(s, M.DirectoryOffer("d", 1, [["a"]], [["empty"]]))
        return asked[0].offer

    def test_folders_of_an_undeclared_feature_ignored(self):
        """A peer that sends empty folders although one of us did not
        declare "empty-folders"
        (Dilated File Transfer, "Version Negotiation": it MUST NOT): the
        attribute is ignored, the offer is otherwise taken as it is."""
        offer = self.offered({"resume": {}})
        self.assertEqual((offer.files, offer.folders), ((("a",),), ()))

    def test_folders_of_a_shared_feature_kept(self):
        """Both declared it: the folders are part of the offer."""
        self.assertEqual(self.offered(None).folders, (("empty",),))

    def test_unknown_features_change_nothing(self):
        """Features we do not know are not shared: no resume, no folders."""
        s = session("receive", "send", {"thumbnails": {}, "compression-zstd": {"level": 3}})
        self.assertEqual(s.negotiated.features, frozenset())
        self.assertEqual((s.negotiated.resume, s.negotiated.empty_folders), (False, False))


class AcceptAnswer(unittest.TestCase):
    def test_accept_fires_once_the_answer_is_out(self):
        """With the resume feature accept() returns a Deferred that fires
        after the kept bytes were checked (in the session's hashing
        runner) and our resume request went out; resumed_from is known
        from then on. Before, nothing was sent."""
        folder = self.mktemp()
        os.makedirs(folder)
        offer, data = M.FileOffer("f", 0, 100), bytes(range(100))
        asked, checks = [], []
        first = offer_in(session("receive", "send", on_offer=asked.append,
                                 run_hashing=_hashing.synchronous), offer)
        self.assertTrue(asked[0].accept(folder).called)
        first.dataReceived(M.encode_record(M.FileData(data[:40])))
        first.connectionLost()

        def run(work):
            checks.append((work, defer.Deferred()))
            return checks[-1][1]
        second = offer_in(session("receive", "send", on_offer=asked.append,
                                  run_hashing=run), offer)
        answered = asked[1].accept(folder)
        self.assertNoResult(answered)
        self.assertEqual((second.transport.records, asked[1].resumed_from), ([], 0))
        work, d = checks[0]
        d.callback(work(_hashing.never))
        self.assertIs(self.successResultOf(answered), asked[1])
        self.assertEqual(asked[1].resumed_from, 40)
        self.assertEqual(second.transport.records[0].resume_offset, 40)

    def test_a_second_answer_raises_and_the_first_stands(self):
        """accept() or reject() of an offer accepted already raises
        OfferAlreadyAnswered (not Automat's NoTransition); the first
        accept's Deferred and sink are kept and the file still arrives."""
        folder = self.mktemp()
        os.makedirs(folder)
        asked = []
        p = offer_in(session("receive", "send", on_offer=asked.append,
                             run_hashing=_hashing.synchronous), M.FileOffer("f", 0, 3))
        incoming = asked[0]
        answered = incoming.accept(folder)
        sink = incoming.sink
        self.assertRaises(OfferAlreadyAnswered, incoming.accept, folder)
        self.assertRaises(OfferAlreadyAnswered, incoming.reject, "no")
        self.assertIs(incoming.sink, sink)
        self.assertIs(self.successResultOf(answered), incoming)
        p.dataReceived(M.encode_record(M.FileData(b"abc")))
        self.assertEqual(p.transport.records[0], M.OfferAccept())

    def test_accept_refused_fires_too(self):
        """An accept refused locally (the target exists) fires at once,
        with the reason in ``refused``."""
        folder = self.mktemp()
        os.makedirs(os.path.join(folder, "f"))
        asked = []
        offer_in(session("receive", "send", on_offer=asked.append), M.FileOffer("f", 0, 3))
        self.successResultOf(asked[0].accept(folder))
        self.assertIn("f", asked[0].refused)


class Restricted(unittest.TestCase):
    """The negotiated value answers for each feature; an offer, ours or the
    peer's, keeps only the attributes of features both declared."""

    def negotiated(self, their_features):
        return V.negotiate("connect", V.app_versions("connect", their_features))

    def test_feature_properties(self):
        n = self.negotiated({V.RESUME: {}, V.FILE_MODES: {}, "thumbnails": {}})
        self.assertEqual((n.resume, n.empty_folders, n.session_totals, n.framed_records,
                          n.file_modes), (True, False, False, False, True))
        everything = self.negotiated(None)
        self.assertTrue(all((everything.resume, everything.empty_folders,
                             everything.session_totals, everything.framed_records,
                             everything.file_modes)))

    def test_our_offer_restricted(self):
        offer = M.DirectoryOffer("d", 1, [["a"]], [["empty"]], [[["empty"], 0o700]])
        ours = _source.Outgoing(offer, [_source.OutgoingFile("/x/a", ("a",), 1, 0, 0o600)])
        bare = _features.outgoing(ours, self.negotiated({}))
        self.assertEqual((bare.offer.folders, bare.offer.folder_modes, bare.files[0].mode),
                         ((), (), None))
        self.assertIs(_features.outgoing(ours, self.negotiated(None)), ours)

    def test_their_offer_restricted(self):
        offer = M.FileOffer("f", 0, 3, mode=0o600)
        self.assertIsNone(_features.incoming(offer, self.negotiated({})).mode)
        self.assertEqual(_features.incoming(offer, self.negotiated(None)), offer)
