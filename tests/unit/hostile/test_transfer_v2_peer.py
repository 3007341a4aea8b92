"""transfer-v2 against a peer that keeps the connection up and stops
(docs/security.md, "transfer-v2 (`wormhole send`/`receive` with transfer-v2,
`wormhole share`)"): each end of an offer subchannel, driven record by
record on a Clock, gives up after exactly the session's inactivity timeout
of silence from the peer, says why to the peer and to the application, and
closes the subchannel. And an offer refused before it was known reaches
the application (``on_refused``); a display callback that raises is logged
once and never reaches the protocol (docs/transfer-v2.md, "Library API")."""
import io
import os

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole.cli._config import Config
from wormhole.cli._receiving import Receiving
from wormhole.transfer_v2 import _framing, _source, _versions
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2._receiving import ReceiveFailed
from wormhole.transfer_v2._sending import OfferLost

TIMEOUT = 300.0
HINT = " (--peer-timeout)"


def session(clock, mode, peer_mode, inactivity_timeout=TIMEOUT, **kw):
    """A session as it is once negotiated with a peer that declared no
    feature: one record per write, no resume."""
    s = T.TransferSession(clock, None, mode, inactivity_timeout=inactivity_timeout,
                          timeout_hint=HINT, free_space=lambda path: 10 ** 12, **kw)
    s._agree(_versions.negotiate(mode, T.app_versions(peer_mode, {})))
    return s


def records(transport):
    """The records written on a subchannel (one write, one record)."""
    return [M.parse_record(data) for data in transport.written]


class RecordingTransport(StringTransport):
    """``full_after``: pause the registered producer once that many data
    records went, as Dilation does when the peer stops taking data."""

    def __init__(self, full_after=None):
        super().__init__()
        self.written = []
        self._full_after = full_after

    def write(self, data):
        self.written.append(data)
        super().write(data)
        if data[:1] == b"\x05" and self._full_after is not None:
            self._full_after -= 1
            if self._full_after == 0:
                self.producer.pauseProducing()


class StalledSender(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.dir = self.mktemp()
        os.makedirs(self.dir)
        self.offers = []
        self.s = session(self.clock, "receive", "send", on_offer=self.offers.append)
        self.p = self.s._offer_in()
        self.t = RecordingTransport()
        self.p.makeConnection(self.t)

    def test_stops_mid_file(self):
        """The sender sends 500 of 1000 bytes and then nothing (the
        connection stays up): each record starts the 300 s again; 300 s
        after the last one the offer fails with the exact reason, the peer
        gets an OfferReject saying it, the subchannel closes and nothing
        is left under the file's name."""
        self.p.dataReceived(M.encode_record(M.FileOffer("f", 0, 1000)))
        [incoming] = self.offers
        done = incoming.when_done()
        self.clock.advance(10 * TIMEOUT)  # our human decides: no timeout
        self.assertEqual(self.clock.getDelayedCalls(), [])
        incoming.accept(self.dir)
        self.p.dataReceived(M.encode_record(M.FileData(b"a" * 400)))
        self.clock.advance(TIMEOUT - 1)
        self.p.dataReceived(M.encode_record(M.FileData(b"a" * 100)))
        self.clock.advance(TIMEOUT - 0.5)
        self.assertNoResult(done)
        self.assertFalse(self.t.disconnecting)
        self.clock.advance(0.5)
        why = ("gave up waiting for the sender's data: nothing came for 300 seconds"
               " (--peer-timeout)")
        f = self.failureResultOf(done, ReceiveFailed)
        self.assertEqual(str(f.value), f"cancelled: {why}")
        self.assertEqual(records(self.t)[-1], M.OfferReject(why))
        self.assertTrue(self.t.disconnecting)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "f")))
        self.p.connectionLost(None)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_never_offers(self):
        """A subchannel opened and never given an offer: closed after
        exactly 300 s, the application never asked."""
        self.clock.advance(TIMEOUT - 0.1)
        self.assertFalse(self.t.disconnecting)
        self.clock.advance(0.1)
        self.assertTrue(self.t.disconnecting)
        self.assertEqual(self.offers, [])
        self.assertEqual(self.s._offers.held(), 0)

    def test_no_timeout_without_option(self):
        """inactivity_timeout=None (the library's default) waits."""
        p = session(self.clock, "receive", "send", inactivity_timeout=None)._offer_in()
        p.makeConnection(StringTransport())
        self.p.connectionLost(None)
        self.assertEqual(self.clock.getDelayedCalls(), [])


class StalledReceiver(unittest.TestCase):
    def offer(self, size, full_after=None):
        self.clock = Clock()
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(b"b" * size)
        self.s = session(self.clock, "send", "receive")
        self.done = defer.Deferred()
        self.p = self.s._offer_out(_source.prepare(path), self.done,
                                        lambda n: None)
        self.t = RecordingTransport(full_after)
        self.p.makeConnection(self.t)

    def test_stops_taking_data(self):
        """The receiver accepts, then its flow control stops our writes
        (Dilation pauses the producer) and it says nothing: the offer fails
        exactly 300 s after the last chunk went, the subchannel closes. The
        time a human takes to accept does not count."""
        self.offer(1024 * 1024, full_after=3)
        self.clock.advance(10 * TIMEOUT)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.p.dataReceived(M.encode_record(M.OfferAccept()))
        self.assertEqual(len(self.t.written), 4)  # the offer, 3 chunks
        self.clock.advance(TIMEOUT - 0.1)
        self.assertNoResult(self.done)
        self.clock.advance(0.1)
        f = self.failureResultOf(self.done, OfferLost)
        self.assertEqual(str(f.value), (
            "offer cancelled: gave up waiting for the receiver to take or acknowledge the "
            "data: nothing came for 300 seconds (--peer-timeout)"))
        self.assertTrue(self.t.disconnecting)
        self.p.connectionLost(None)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_never_acknowledges(self):
        """Everything was sent; the receiver never sends its
        FileAcknowledge: given up 300 s after the last byte went."""
        self.offer(3000)
        self.p.dataReceived(M.encode_record(M.OfferAccept()))
        self.clock.advance(0)
        self.assertEqual(sum(len(w) - 1 for w in self.t.written
                             if w[:1] == b"\x05"), 3000)
        self.clock.advance(TIMEOUT - 0.1)
        self.assertNoResult(self.done)
        self.clock.advance(0.1)
        self.failureResultOf(self.done, OfferLost)
        self.assertTrue(self.t.disconnecting)


class _Incoming:
    """An offer as ``Receiving`` sees it; rejecting it ends it."""

    def __init__(self):
        self._done = defer.Deferred()
        self.rejected = []

    def when_done(self):
        d = defer.Deferred()
        self._done.addBoth(lambda r: (d.callback(r), r)[1])
        return d

    def reject(self, reason):
        self.rejected.append(reason)
        self._done.callback(reason)


class _Session:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


class SilentSession(unittest.TestCase):
    def test_sender_stops_offering(self):
        """``wormhole receive`` over transfer-v2: a sender that opens the
        session and offers nothing (or nothing more) while keeping it up.
        With no offer under way the receiver closes the session exactly
        300 s after the session opened or the last offer ended, and says
        why; the time an offer is under way does not count."""
        clock = Clock()
        cfg = Config(stderr=io.StringIO(), only_text=True, peer_timeout=TIMEOUT)
        receiving = Receiving(clock, cfg, ask=None)
        session = _Session()
        receiving.expect_offers(session)
        clock.advance(TIMEOUT - 1)
        receiving.on_offer(_Incoming())  # refused at once (--only-text): over
        self.assertEqual(session.closed, 0)
        clock.advance(TIMEOUT - 0.1)
        self.assertEqual((session.closed, receiving.gave_up), (0, None))
        clock.advance(0.1)
        self.assertEqual(session.closed, 1)
        self.assertEqual(str(receiving.gave_up), (
            "gave up waiting for the sender's next offer: nothing came for 300 seconds"
            " (--peer-timeout)"))
        receiving.stop_waiting()
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_offer_under_way_not_counted(self):
        """While an offer is under way (here: never ending) the session is
        not given up; the offer's own watchdog covers that wait."""
        clock = Clock()
        cfg = Config(stderr=io.StringIO(), peer_timeout=TIMEOUT)
        receiving = Receiving(clock, cfg, ask=None)
        receiving._questions.acquire()  # a question about an earlier offer is open
        session = _Session()
        receiving.expect_offers(session)
        receiving.on_offer(_Incoming())
        clock.advance(10 * TIMEOUT)
        self.assertEqual((session.closed, clock.getDelayedCalls()), (0, []))
        receiving.stop_waiting()


class RefusedBeforeKnown(unittest.TestCase):
    """An offer refused before it was known reaches the application
    through the session's ``on_refused`` (docs/transfer-v2.md, "Library
    API")."""

    def setUp(self):
        self.clock = Clock()
        self.refused = []
        self.offers = []
        self.s = session(self.clock, "receive", "send", on_offer=self.offers.append,
                         on_refused=self.refused.append)
        self.p = self.s._offer_in()
        self.t = RecordingTransport()
        self.p.makeConnection(self.t)

    def test_malformed_first_record(self):
        self.p.dataReceived(b"\x63junk")
        [error] = self.refused
        self.assertIsInstance(error, T.OfferRefused)
        self.assertEqual(str(error), "refused an offer from the peer before it was known: "
                                     "protocol error from the offering side: unknown record "
                                     "kind 99")
        self.assertTrue(self.t.disconnecting)
        self.assertEqual(self.offers, [])

    def test_session_closing_is_no_refusal(self):
        """Our own session ending cancels an offer not yet known: no refusal."""
        self.s._offers.cancel_all("the session is closing")
        self.assertTrue(self.t.disconnecting)
        self.assertEqual(self.refused, [])

    def test_known_offer_is_not_refused_here(self):
        """Once the offer is known its IncomingOffer says how it ended."""
        self.p.dataReceived(M.encode_record(M.FileOffer("f", 0, 10)))
        self.p.dataReceived(b"\x63junk")
        self.assertEqual(len(self.offers), 1)
        self.assertEqual(self.refused, [])


class DisplayErrors(unittest.TestCase):
    """A display callback that raises is logged once and never reaches the
    protocol (docs/transfer-v2.md, "Library API"): the transfer completes."""

    def test_receiver_progress_raises(self):
        clock = Clock()
        folder = self.mktemp()
        os.makedirs(folder)
        offers = []
        s = session(clock, "receive", "send", on_offer=offers.append)
        p = s._offer_in()
        p.makeConnection(RecordingTransport())
        data = b"d" * 3000
        p.dataReceived(M.encode_record(M.FileOffer("f", 0, len(data))))
        [incoming] = offers
        incoming.progress = lambda nbytes: 1 / 0
        incoming.accept(folder)
        for i in range(0, len(data), 1000):
            p.dataReceived(M.encode_record(M.FileData(data[i:i + 1000])))
        h = M.new_hash()
        h.update(data)
        p.dataReceived(M.encode_record(M.FileAcknowledge(len(data), h.digest())))
        p.connectionLost(None)
        done = incoming.when_done()
        clock.advance(0)
        self.assertIsInstance(self.successResultOf(done), T.Received)
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)

    def test_sender_progress_raises(self):
        clock = Clock()
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(b"s" * 3000)
        s = session(clock, "send", "receive")
        done = defer.Deferred()
        p = s._offer_out(_source.prepare(path), done,
                                   lambda nbytes: [][1])
        t = RecordingTransport()
        p.makeConnection(t)
        p.dataReceived(M.encode_record(M.OfferAccept()))
        clock.advance(0)
        self.assertEqual(sum(len(w) - 1 for w in t.written if w[:1] == b"\x05"), 3000)
        self.assertEqual(len(self.flushLoggedErrors(IndexError)), 1)
        self.assertNoResult(done)  # it waits for the receiver's acknowledgement


class _Connector:
    """A Dilation endpoint whose subchannels connect at once and never
    hear back (the peer's side never answers a close)."""

    def __init__(self):
        self.transports = []

    def listen(self, factory):
        return defer.succeed(None)

    def connect(self, factory):
        protocol = factory.buildProtocol(None)
        transport = StringTransport()
        self.transports.append(transport)
        protocol.makeConnection(transport)
        return defer.succeed(protocol)


class _Dilated:
    def __init__(self):
        self.endpoint = _Connector()

    def listener_for(self, name):
        return self.endpoint

    def connector_for(self, name):
        return self.endpoint


class _Wormhole:
    def __init__(self, versions):
        self._versions = versions
        self.dilated = _Dilated()

    def get_versions(self):
        return defer.succeed(self._versions)

    def dilate(self, **kwargs):
        return self.dilated


class UnansweredClose(unittest.TestCase):
    def opened(self):
        """A sending session, open, with an inactivity timeout of 8 s."""
        clock = Clock()
        w = _Wormhole(T.app_versions("receive"))
        s = T.TransferSession(clock, w, "send", inactivity_timeout=8.0)
        started = s.start()
        clock.advance(0)
        self.successResultOf(started)
        return clock, w, s

    def test_close_bounded_by_the_inactivity_timeout(self):
        """Item 4: the peer never answers our close (it stopped reading):
        close() fires after exactly the inactivity timeout, not after
        Dilation's 300 s close timeout."""
        clock, w, s = self.opened()
        closed = s.close()
        [control] = w.dilated.endpoint.transports
        self.assertTrue(control.disconnecting)  # our CLOSE went; no answer comes
        clock.advance(8.0 - 0.1)
        self.assertNoResult(closed)
        clock.advance(0.1)
        clock.advance(0)
        self.assertEqual(self.successResultOf(closed), "the peer has been unreachable for 8.0 s")
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_answered_close_leaves_no_timer(self):
        clock, w, s = self.opened()
        closed = s.close()
        s._control_lost(ours=True)  # the peer answered our CLOSE
        clock.advance(0)
        self.assertEqual(self.successResultOf(closed), "closed")
        self.assertEqual(clock.getDelayedCalls(), [])


class _Logged(StringTransport):
    """A subchannel's transport writing into one log shared with the
    other subchannels: the order on the connection."""

    def __init__(self, name, log):
        super().__init__()
        self._name, self._log = name, log

    def write(self, data):
        self._log.append((self._name, "data"))
        super().write(data)

    def loseConnection(self):
        self._log.append((self._name, "close"))
        super().loseConnection()


class CloseAfterAnswers(unittest.TestCase):
    def test_a_refusal_leaves_before_the_control_close(self):
        """A share side whose refusal of the peer's offer ends the session
        (its own offers done, its input ended) decides to close while the
        delivery that brought the offer is handled: the refusal, held for
        the turn's end, still leaves before our control's close, or the
        peer reads "the peer ended the session" for an offer we declined."""
        clock = Clock()
        log = []
        w = _Wormhole(T.app_versions("connect"))

        def refuse_and_end(incoming):
            incoming.reject("transfer rejected")
            s.close()
        s = T.TransferSession(clock, w, "connect", on_offer=refuse_and_end)
        started = s.start()
        clock.advance(0)
        self.successResultOf(started)
        [control] = w.dilated.endpoint.transports
        control.loseConnection = lambda: log.append(("control", "close"))
        offer = s._offer_in()
        offer.makeConnection(_Logged("offer", log))
        offer.dataReceived(_framing.frame(M.encode_record(M.FileOffer("f", 0, 10))))
        self.assertEqual(log[:2], [("offer", "data"), ("control", "close")])
