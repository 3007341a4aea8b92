"""L4 outbound (Dilation protocol, "L4 protocol", "Flow Control"): one seqnum
counter, the queue retired by ACKs and resent on every new L3, ACKs never
queued, subchannels paused while L3 is full or gone."""

from twisted.internet.interfaces import IPushProducer
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._outbound import MAX_DATA_RECORD, RECORD_COST, Outbound
from wormhole._dilation._records import Ack, Close, Data, Open

from .fakes import FakeConnection, FakeSubChannel


class OutboundTests(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.o = Outbound()
        self.c = FakeConnection(self.events)

    def test_interfaces(self):
        """Outbound provides IOutbound and IPushProducer; the fakes provide theirs."""
        verifyObject(I.IOutbound, self.o)
        verifyObject(IPushProducer, self.o)
        verifyObject(I.IL3Connection, self.c)
        verifyObject(I.ISubChannel, FakeSubChannel([], "x"))

    def test_one_counter_for_all_subchannels(self):
        """OPEN/DATA/CLOSE of different subchannels share one seqnum space."""
        self.o.use_connection(self.c)
        self.o.send_open(1, "a")
        self.o.send_open(2, "b")
        self.o.send_data(1, b"x")
        self.o.send_data(2, b"y")
        self.o.send_close(1)
        self.assertEqual(self.c.sent, [Open(1, 0, "a"), Open(2, 1, "b"), Data(1, 2, b"x"),
                                       Data(2, 3, b"y"), Close(1, 4)])

    def test_queued_while_disconnected_then_sent_in_order(self):
        """Records written with no L3 are sent, in order, when one arrives."""
        self.o.send_open(1, "a")
        self.o.send_data(1, b"x")
        self.o.use_connection(self.c)
        self.assertEqual(self.c.sent, [Open(1, 0, "a"), Data(1, 1, b"x")])
        self.assertIs(self.c.producer, self.o)

    def test_resend_unacked_on_every_new_connection(self):
        """An ACK for N retires seqnums <= N; the rest is resent on the next L3."""
        self.o.use_connection(self.c)
        for i in range(4):
            self.o.send_data(1, bytes([i]))
        self.o.handle_ack(1)
        self.o.stop_using_connection()
        self.o.send_data(1, b"late")
        c2 = FakeConnection(self.events, "c2")
        self.o.use_connection(c2)
        self.assertEqual(c2.sent, [Data(1, 2, b"\x02"), Data(1, 3, b"\x03"), Data(1, 4, b"late")])
        self.o.handle_ack(4)
        self.o.stop_using_connection()
        c3 = FakeConnection(self.events, "c3")
        self.o.use_connection(c3)
        self.assertEqual(c3.sent, [])

    def test_acks_not_queued(self):
        """ACKs are sent only when connected and never resent."""
        self.o.send_ack(7)
        self.o.use_connection(self.c)
        self.assertEqual(self.c.sent, [])
        self.o.send_ack(8)
        self.assertEqual(self.c.sent, [Ack(8)])

    def test_flow_control(self):
        """Subchannels are paused with no L3, resumed when one is attached,
        paused when the transport pauses us, resumed when it resumes us."""
        a = FakeSubChannel(self.events, "a")
        self.o.subchannel_opened(a)
        self.assertEqual(self.events, [("a.local_pause",)])
        del self.events[:]
        self.o.use_connection(self.c)
        self.assertEqual(self.events, [("c.register_producer",), ("a.local_resume",)])
        del self.events[:]
        b = FakeSubChannel(self.events, "b")
        self.o.subchannel_opened(b)
        self.assertEqual(self.events, [])
        self.o.pauseProducing()
        self.assertEqual(sorted(self.events), [("a.local_pause",), ("b.local_pause",)])
        del self.events[:]
        self.o.pauseProducing()
        c = FakeSubChannel(self.events, "c")
        self.o.subchannel_opened(c)
        self.assertEqual(self.events, [("c.local_pause",)])
        del self.events[:]
        self.o.subchannel_closed(c)
        self.o.resumeProducing()
        self.assertEqual(sorted(self.events), [("a.local_resume",), ("b.local_resume",)])
        del self.events[:]
        self.o.stop_using_connection()
        self.assertEqual(self.events[0], ("c.unregister_producer",))
        self.assertEqual(sorted(self.events[1:]), [("a.local_pause",), ("b.local_pause",)])

    def test_pause_during_resend(self):
        """The resend writes only as much as the transport takes: when it
        pauses us, the rest waits for resumeProducing; subchannels stay
        paused until the whole queue is resent, and new records queue
        behind the resend (order is kept)."""
        a = FakeSubChannel(self.events, "a")
        self.o.subchannel_opened(a)
        for i in range(3):
            self.o.send_data(1, bytes([i]))

        class Pausing(FakeConnection):
            def send_record(inner, record):
                FakeConnection.send_record(inner, record)
                inner.producer.pauseProducing()

        c = Pausing(self.events, "p")
        del self.events[:]
        self.o.use_connection(c)
        self.assertEqual([r.seqnum for r in c.sent], [0])
        self.o.send_data(1, b"new")
        self.assertEqual([r.seqnum for r in c.sent], [0])
        self.o.resumeProducing()
        self.assertEqual([r.seqnum for r in c.sent], [0, 1])
        self.assertNotIn(("a.local_resume",), self.events)
        self.o.handle_ack(2)  # the peer already had 2: it is skipped
        self.o.resumeProducing()
        self.assertEqual([r.seqnum for r in c.sent], [0, 1, 3])
        self.o.resumeProducing()  # caught up (and the transport has room)
        self.assertEqual(self.events[-1], ("a.local_resume",))
        self.o.send_data(1, b"direct")
        self.assertEqual([r.seqnum for r in c.sent], [0, 1, 3, 4])

    def test_full_transport_and_unacked_are_two_reasons(self):
        """Caught up, a full transport and too much unacknowledged data
        each pause the subchannels; they resume only once neither holds,
        whichever goes first."""
        o = Outbound(max_unacked=RECORD_COST + 1000)
        a = FakeSubChannel(self.events, "a")
        o.subchannel_opened(a)
        o.use_connection(self.c)
        for first, second in (("ack", "drain"), ("drain", "ack")):
            del self.events[:]
            o.send_data(1, bytes(2000))      # too much unacknowledged
            o.pauseProducing()               # and the transport is full
            self.assertEqual(self.events, [("a.local_pause",)])
            for step in (first, second):
                self.assertNotIn(("a.local_resume",), self.events)
                if step == "ack":
                    o.handle_ack(self.c.sent[-1].seqnum)
                else:
                    o.resumeProducing()
            self.assertEqual(self.events, [("a.local_pause",), ("a.local_resume",)])

    def test_seqnum_wraps_at_32_bits(self):
        """The 4-byte seqnum field wraps instead of overflowing."""
        self.o._next_seqnum = 2 ** 32 - 1
        self.o.use_connection(self.c)
        self.o.send_data(1, b"")
        self.o.send_data(1, b"")
        self.assertEqual([r.seqnum for r in self.c.sent], [2 ** 32 - 1, 0])

    def test_ack_retires_across_wrap(self):
        """An ACK after the wrap retires the records just before it too."""
        self.o._next_seqnum = 2 ** 32 - 2
        for _ in range(4):
            self.o.send_data(1, b"")
        self.o.handle_ack(0)
        self.o.use_connection(self.c)
        self.assertEqual([r.seqnum for r in self.c.sent], [1])


class UnackedBound(unittest.TestCase):
    """The queue of records the peer has not acknowledged is bounded by
    backpressure (docs/security.md, "Dilation")."""

    def setUp(self):
        self.events = []
        self.c = FakeConnection(self.events)

    def test_default(self):
        """16 MiB of unacknowledged records by default."""
        self.assertEqual(Outbound()._max_unacked, 16 * 1024 * 1024)

    def test_pause_at_limit_resume_at_half(self):
        """Writers are paused when the unacknowledged cost exceeds
        max_unacked, resumed only when ACKs bring it to half; a subchannel
        opened meanwhile starts paused; the L3's own pause is independent."""
        o = Outbound(max_unacked=10 * (RECORD_COST + 1000))
        a = FakeSubChannel(self.events, "a")
        o.subchannel_opened(a)
        o.use_connection(self.c)
        del self.events[:]
        for _ in range(10):
            o.send_data(1, bytes(1000))
        self.assertEqual(self.events, [])
        o.send_data(1, bytes(1000))
        self.assertEqual(self.events, [("a.local_pause",)])
        self.assertEqual(o.unacked_bytes(), 11 * (RECORD_COST + 1000))
        b = FakeSubChannel(self.events, "b")
        o.subchannel_opened(b)
        self.assertEqual(self.events[-1], ("b.local_pause",))
        del self.events[:]
        o.handle_ack(4)  # 6 records left: still above half
        self.assertEqual(self.events, [])
        o.pauseProducing()     # the transport too
        o.handle_ack(5)        # 5 left: half, but the transport holds
        self.assertEqual(self.events, [])
        o.resumeProducing()
        self.assertEqual(sorted(self.events), [("a.local_resume",), ("b.local_resume",)])
        self.assertEqual(o.unacked_bytes(), 5 * (RECORD_COST + 1000))

    def test_tiny_writes_count(self):
        """A flood of 1-byte writes is bounded too: each record costs its
        payload plus RECORD_COST."""
        o = Outbound(max_unacked=100 * RECORD_COST)
        a = FakeSubChannel(self.events, "a")
        o.subchannel_opened(a)
        o.use_connection(self.c)
        del self.events[:]
        n = 0
        while not self.events:
            o.send_data(1, b"x")
            n += 1
        self.assertEqual(n, 100)

    def test_large_write_split(self):
        """A write larger than MAX_DATA_RECORD goes out as several DATA
        records, none larger, in order."""
        o = Outbound()
        o.use_connection(self.c)
        blob = bytes(range(256)) * (2 * MAX_DATA_RECORD // 256 + 3)
        o.send_data(3, blob)
        self.assertEqual([len(r.data) for r in self.c.sent],
                         [MAX_DATA_RECORD, MAX_DATA_RECORD, len(blob) - 2 * MAX_DATA_RECORD])
        self.assertEqual(b"".join(r.data for r in self.c.sent), blob)
        self.assertEqual([r.seqnum for r in self.c.sent], [0, 1, 2])
