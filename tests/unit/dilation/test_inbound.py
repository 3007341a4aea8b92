"""L4 inbound (Dilation protocol, "L4 protocol", "Flow Control"): ACK
everything, deliver each seqnum once, dispatch to subchannels, stop
reading while any subchannel is paused."""

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._inbound import ACK_DELAY, ACK_EVERY, Inbound
from wormhole._dilation._records import Close, Data, Open

from .fakes import FakeConnection, FakeListener, FakeOutbound, FakeSubChannel


class InboundTests(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.i = Inbound()
        self.listener = FakeListener(self.events)
        self.i.wire(FakeOutbound(self.events), self.listener)
        self.c = FakeConnection(self.events)

    def test_interfaces(self):
        """Inbound provides IInbound; the fakes provide theirs."""
        verifyObject(I.IInbound, self.i)
        verifyObject(I.IOutbound, FakeOutbound([]))
        verifyObject(I.ISubchannelListener, self.listener)

    def test_dispatch_and_ack(self):
        """OPEN goes to the listener, DATA/CLOSE to that subchannel; at the
        end of a read batch one cumulative ACK covers them all."""
        self.i.use_connection(self.c)
        self.i.got_record(Open(1, 0, "chat"))
        self.i.got_record(Data(1, 1, b"hi"))
        self.i.got_record(Close(1, 2))
        self.i.end_of_batch()
        self.i.end_of_batch()
        self.assertEqual(self.events, [
            ("listener.got_open", 1, "chat"), ("sc1.remote_data", b"hi"),
            ("sc1.remote_close",), ("outbound.send_ack", 2)])

    def test_duplicates_acked_not_delivered(self):
        """A resent record (seqnum already seen) is ACKed again but not
        delivered again."""
        self.i.use_connection(self.c)
        self.i.got_record(Open(1, 0, "chat"))
        self.i.got_record(Data(1, 1, b"a"))
        self.i.end_of_batch()
        self.i.stop_using_connection()
        self.i.use_connection(FakeConnection(self.events, "c2"))
        self.i.got_record(Open(1, 0, "chat"))
        self.i.got_record(Data(1, 1, b"a"))
        self.i.got_record(Data(1, 2, b"b"))
        self.i.end_of_batch()
        self.assertEqual(self.listener.made[1].data, [b"a", b"b"])
        # the first ACK on the new connection is sent when it is attached;
        # duplicates are ACKed at once; the one new byte of DATA is owed
        # (less than ACK_EVERY)
        self.assertEqual([e[1] for e in self.events if e[0] == "outbound.send_ack"],
                         [1, 1, 0, 1])

    def test_ack_every(self):
        """A batch of DATA is ACKed once ACK_EVERY bytes arrived since the
        last ACK (cumulatively, across batches); an OPEN or CLOSE is ACKed at
        the end of its batch whatever the bytes."""
        self.i.use_connection(self.c)
        self.i.got_record(Open(1, 0, "chat"))
        self.i.end_of_batch()
        half = b"x" * (ACK_EVERY // 2)
        self.i.got_record(Data(1, 1, half))
        self.i.end_of_batch()
        self.i.got_record(Data(1, 2, half[:-1]))
        self.i.end_of_batch()
        def acks():
            return [e[1] for e in self.events if e[0] == "outbound.send_ack"]
        self.assertEqual(acks(), [0])
        self.i.got_record(Data(1, 3, b"y"))
        self.i.end_of_batch()
        self.assertEqual(acks(), [0, 3])
        self.i.got_record(Data(1, 4, b"z"))
        self.i.end_of_batch()
        self.assertEqual(acks(), [0, 3])
        self.i.got_record(Close(1, 5))
        self.i.end_of_batch()
        self.assertEqual(acks(), [0, 3, 5])

    def test_late_ack(self):
        """With a clock, fewer than ACK_EVERY bytes are ACKed ACK_DELAY after
        their batch (a stream gone quiet, or a peer whose unacknowledged
        window is smaller than ACK_EVERY, is not left waiting); one timer
        serves every batch meanwhile, and a full ACK sent first leaves it
        nothing to do; a lost connection cancels it."""
        clock = Clock()
        self.i = Inbound(clock=clock)
        self.i.wire(FakeOutbound(self.events), self.listener)
        def acks():
            return [e[1] for e in self.events if e[0] == "outbound.send_ack"]
        self.i.use_connection(self.c)
        self.i.got_record(Open(1, 0, "chat"))
        self.i.end_of_batch()
        self.i.got_record(Data(1, 1, b"a"))
        self.i.end_of_batch()
        self.i.got_record(Data(1, 2, b"b"))
        self.i.end_of_batch()
        self.assertEqual(acks(), [0])
        self.assertEqual(len(clock.getDelayedCalls()), 1)
        clock.advance(ACK_DELAY)
        self.assertEqual(acks(), [0, 2])
        self.i.got_record(Data(1, 3, b"c"))
        self.i.end_of_batch()
        self.i.got_record(Data(1, 4, b"x" * ACK_EVERY))
        self.i.end_of_batch()
        self.assertEqual(acks(), [0, 2, 4])
        clock.advance(ACK_DELAY)
        self.assertEqual(acks(), [0, 2, 4])
        self.i.got_record(Data(1, 5, b"d"))
        self.i.end_of_batch()
        self.i.stop_using_connection()
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_no_ack_without_connection(self):
        """An ACK still due when the connection goes is dropped (the peer
        resends and the duplicate is ACKed); records with no connection are
        ignored."""
        self.i.use_connection(self.c)
        self.i.got_record(Open(1, 0, "chat"))
        self.i.stop_using_connection()
        self.i.end_of_batch()
        self.i.got_record(Data(1, 1, b"x"))
        self.assertEqual([e for e in self.events if e[0] == "outbound.send_ack"], [])
        self.assertEqual(self.listener.made[1].data, [])

    def test_unknown_subchannel(self):
        """DATA/CLOSE for a subchannel never opened are discarded (and
        ACKed); a second OPEN of an id is ignored."""
        self.i.use_connection(self.c)
        self.i.got_record(Data(9, 0, b"x"))
        self.i.got_record(Close(9, 1))
        self.i.got_record(Open(3, 2, "a"))
        self.i.got_record(Open(3, 3, "b"))
        self.assertEqual([e for e in self.events if e[0] != "outbound.send_ack"],
                         [("listener.got_open", 3, "a")])

    def test_registered_local_subchannel(self):
        """DATA for a subchannel we opened reaches it."""
        sc = FakeSubChannel(self.events, "mine")
        self.i.register_subchannel(2, sc)
        self.i.use_connection(self.c)
        self.i.got_record(Data(2, 0, b"z"))
        self.assertEqual(sc.data, [b"z"])

    def test_any_paused_pauses_reading(self):
        """The connection is paused when the first subchannel pauses and
        resumed only when the last paused one resumes or closes."""
        a = FakeSubChannel(self.events, "a")
        b = FakeSubChannel(self.events, "b")
        self.i.register_subchannel(1, a)
        self.i.register_subchannel(3, b)
        self.i.use_connection(self.c)
        self.i.subchannel_paused(a)
        self.i.subchannel_paused(b)
        self.i.subchannel_paused(a)
        self.assertEqual(self.events, [("c.pauseProducing",)])
        self.i.subchannel_resumed(a)
        self.assertEqual(self.events, [("c.pauseProducing",)])
        self.i.subchannel_closed(3)
        self.assertEqual(self.events, [("c.pauseProducing",), ("c.resumeProducing",)])

    def test_new_connection_starts_paused(self):
        """A subchannel paused while there is no L3 pauses the next L3 at once."""
        a = FakeSubChannel(self.events, "a")
        self.i.register_subchannel(1, a)
        self.i.subchannel_paused(a)
        self.i.use_connection(self.c)
        self.assertEqual(self.events, [("c.pauseProducing",)])
        self.i.stop_using_connection()
        self.i.subchannel_resumed(a)
        c2 = FakeConnection(self.events, "c2")
        self.i.use_connection(c2)
        self.assertEqual(self.events, [("c.pauseProducing",)])

    def test_seqnum_wrap(self):
        """After 2**32-1 the next record is new, not a duplicate."""
        self.i.use_connection(self.c)
        self.i._last_seqnum = 2 ** 32 - 2
        self.i.got_record(Open(1, 2 ** 32 - 1, "a"))
        self.i.got_record(Data(1, 0, b"after-wrap"))
        self.assertEqual(self.listener.made[1].data, [b"after-wrap"])


class OpenRefusals(unittest.TestCase):
    """OPENs are checked before a subchannel exists (Dilation protocol,
    "L5 subchannels"; docs/security.md, "Dilation")."""

    def setUp(self):
        self.events = []
        self.listener = FakeListener(self.events)

    def inbound(self, we_lead, **kw):
        i = Inbound(**kw)
        i.wire(FakeOutbound(self.events), self.listener)
        i.use_connection(FakeConnection(self.events, is_leader=we_lead))
        del self.events[:]
        return i

    def test_reserved_and_wrong_parity(self):
        """Id 0 and ids of our own parity are answered with a CLOSE and
        never reach the listener; the peer's parity is accepted. As Leader
        the peer's ids are even, as Follower odd."""
        for we_lead, bad, good in ((True, 3, 2), (False, 2, 3)):
            i = self.inbound(we_lead)
            i.got_record(Open(0, 0, "x"))
            i.got_record(Open(bad, 1, "x"))
            i.got_record(Open(good, 2, "x"))
            self.assertEqual(self.events, [("outbound.send_close", 0),
                                           ("outbound.send_close", bad),
                                           ("listener.got_open", good, "x")])
            del self.events[:]
            # DATA for a refused id is dropped, not delivered anywhere
            i.got_record(Data(bad, 3, b"lost"))
            self.assertEqual(self.events, [])

    def test_our_own_id_not_closed(self):
        """An OPEN whose id is one of our open subchannels is only logged:
        a CLOSE would end our subchannel."""
        i = self.inbound(True)
        mine = FakeSubChannel(self.events, "mine")
        i.register_subchannel(5, mine)
        i.got_record(Open(5, 0, "x"))
        self.assertEqual(self.events, [])

    def test_peer_subchannel_limit(self):
        """At most max_peer_subchannels (1024 by default) peer subchannels
        are open at once; one more is refused with a CLOSE; once one
        closes, a new OPEN is accepted again."""
        self.assertEqual(Inbound()._max_peer_subchannels, 1024)
        i = self.inbound(False, max_peer_subchannels=3)
        for n in range(4):
            i.got_record(Open(2 * n + 1, n, "x"))
        self.assertEqual(self.events, [("listener.got_open", 1, "x"),
                                       ("listener.got_open", 3, "x"),
                                       ("listener.got_open", 5, "x"),
                                       ("outbound.send_close", 7)])
        del self.events[:]
        i.subchannel_closed(3)
        i.got_record(Open(9, 4, "x"))
        self.assertEqual(self.events, [("listener.got_open", 9, "x")])


    def test_too_many_refusals_drop_the_connection(self):
        """Each refusal queues a CLOSE until the peer ACKs it: after
        max_refused_opens (1024 by default) refusals on one connection,
        the next drops the connection instead; a new connection starts
        the count again."""
        self.assertEqual(Inbound()._max_refused_opens, 1024)
        i = self.inbound(True, max_refused_opens=2)
        for n in range(3):
            i.got_record(Open(2 * n + 1, n, "x"))
        self.assertEqual(self.events, [("outbound.send_close", 1),
                                       ("outbound.send_close", 3),
                                       ("c.disconnect",)])
        i.stop_using_connection()
        i.use_connection(FakeConnection(self.events, "c2", is_leader=True))
        del self.events[:]
        i.got_record(Open(7, 3, "x"))
        self.assertEqual(self.events, [("outbound.send_close", 7)])


    def test_complaints_logged_ten_times(self):
        """A peer's bad records are logged ten times per connection, then
        one line says the rest are not; a log line never holds a payload."""
        from twisted.python import log

        from wormhole._dilation._inbound import _describe
        logged = []
        log.addObserver(logged.append)
        self.addCleanup(log.removeObserver, logged.append)
        i = self.inbound(True)
        for n in range(50):
            i.got_record(Data(99, n, b"x"))
        texts = [log.textFromEventDict(e) for e in logged]
        texts = [t for t in texts if t.startswith("Dilation")]
        self.assertEqual(texts, ["Dilation: DATA for unknown subchannel 99"] * 10 + [
            "Dilation: further complaints about this connection's records are not logged"])
        self.assertEqual(_describe(Data(3, 4, bytes(10 ** 6))), "Data(scid=3, seqnum=4, "
                                                                   "1000000 bytes)")


class Backlog(unittest.TestCase):
    """Data waiting for a listener is bounded by stopping the L3's reads
    (docs/security.md, "Dilation")."""

    def test_pause_over_limit_resume_when_taken(self):
        """Over max_backlog bytes (4 MiB by default) in all unaccepted
        subchannels together, the connection is paused; when a listener
        takes them it resumes; an application's own pause is kept."""
        self.assertEqual(Inbound()._max_backlog, 4 * 1024 * 1024)
        events = []
        i = Inbound(max_backlog=100)
        i.wire(FakeOutbound(events), FakeListener(events))
        i.use_connection(FakeConnection(events))
        del events[:]
        a, b = object(), object()
        i.backlog_added(a, 60)
        i.backlog_added(b, 40)
        self.assertEqual(events, [])
        i.backlog_added(b, 1)
        self.assertEqual(events, [("c.pauseProducing",)])
        self.assertEqual(i.backlog_bytes(), 101)
        i.subchannel_paused(a)      # the application too
        i.backlog_released(b)
        self.assertEqual(events, [("c.pauseProducing",)])
        i.subchannel_resumed(a)
        self.assertEqual(events, [("c.pauseProducing",), ("c.resumeProducing",)])
        self.assertEqual(i.backlog_bytes(), 60)
