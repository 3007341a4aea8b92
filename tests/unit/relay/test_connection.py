"""The per-connection machine, with recording glue, a real Pairing and a
Clock: what each input makes it say, close and record."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_relay._connection import RelayConnection
from wormhole_relay._interfaces import IPair, IPairing, IRelayConnection, ITransportGlue

from ...relay._fakes import SIDE1, SIDE2, TOKEN, TOKEN2, World, handshake


class Base(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.w = World(self.clock)

    def world(self, **limits):
        self.w = World(self.clock, **limits)
        return self.w

    def pair(self, side_a=SIDE1, side_b=SIDE2):
        a, ga = self.w.connect("A")
        b, gb = self.w.connect("B")
        a.data_received(handshake(TOKEN, side_a))
        b.data_received(handshake(TOKEN, side_b))
        return a, ga, b, gb


class Interfaces(Base):
    def test_verify(self):
        """The machine, its glue, the pairing and a pair provide their
        interfaces."""
        a, ga, b, gb = self.pair()
        verifyObject(IRelayConnection, a)
        verifyObject(ITransportGlue, ga)
        verifyObject(IPairing, self.w.pairing)
        verifyObject(IPair, a._pair)


class Pairing(Base):
    def test_pair_with_sides(self):
        """Two handshakes with one token and two sides: both get ok\\n and
        each streams from the other (backpressure both ways)."""
        a, ga, b, gb = self.pair()
        self.assertEqual(ga.written, b"ok\n")
        self.assertEqual(gb.written, b"ok\n")
        self.assertIs(ga.streaming_from, gb)
        self.assertIs(gb.streaming_from, ga)

    def test_stream_before_ok(self):
        """Each glue is told to stream with its partner before it writes
        ok\n: a glue that splices takes its socket over while nothing is
        buffered on it, so ok\n and what follows keep their order."""
        a, ga, b, gb = self.pair()
        mine = [e for e in self.w.events
                if e[0] == "A" and e[1] in ("stream_with", "write")]
        self.assertEqual(mine, [("A", "stream_with", "B"),
                                ("A", "write", b"ok\n")])

    def test_pair_without_sides(self):
        """The old handshake (no side) pairs too."""
        a, ga, b, gb = self.pair(None, None)
        self.assertEqual((ga.written, gb.written), (b"ok\n", b"ok\n"))

    def test_pair_mixed(self):
        """One with a side and one without pair (seen on the reference)."""
        a, ga, b, gb = self.pair(SIDE1, None)
        self.assertEqual((ga.written, gb.written), (b"ok\n", b"ok\n"))

    def test_first_waits_silently(self):
        """A lone handshake gets no answer until its partner comes."""
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual(ga.written, b"")
        self.assertNotIn(("A", "close"), self.w.events)

    def test_different_tokens_do_not_pair(self):
        """Handshakes with different tokens both keep waiting."""
        a, ga = self.w.connect("A")
        b, gb = self.w.connect("B")
        a.data_received(handshake(TOKEN, SIDE1))
        b.data_received(handshake(TOKEN2, SIDE2))
        self.assertEqual((ga.written, gb.written), (b"", b""))

    def test_relays_both_ways(self):
        """After ok, bytes from one go to the other, in order."""
        a, ga, b, gb = self.pair()
        a.data_received(b"hello ")
        a.data_received(b"there")
        b.data_received(b"back")
        self.assertEqual(gb.written, b"ok\nhello there")
        self.assertEqual(ga.written, b"ok\nback")

    def test_handshake_in_pieces(self):
        """A handshake split over many reads still pairs."""
        a, ga = self.w.connect("A")
        b, gb = self.w.connect("B")
        line = handshake(TOKEN, SIDE1)
        for i in range(len(line)):
            a.data_received(line[i:i + 1])
        b.data_received(handshake(TOKEN, SIDE2))
        self.assertEqual(ga.written, b"ok\n")

    def test_partner_closing_closes_us(self):
        """When one side goes, the relay stops streaming from it into the
        other and closes the other (Transit protocol, "Relay Handshake": no half-close)."""
        a, ga, b, gb = self.pair()
        del self.w.events[:]
        a.connection_lost()
        self.assertEqual(self.w.events, [("A", "stop_streaming"),
                                         ("B", "stop_streaming"),
                                         ("B", "close")])

    def test_happy_record_once_per_pair(self):
        """A pair writes one record, mood happy, with the bytes of both
        directions and the times from the Clock."""
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        self.clock.advance(3)
        b, gb = self.w.connect("B")
        b.data_received(handshake(TOKEN, SIDE2))
        a.data_received(b"x" * 10)
        b.data_received(b"y" * 5)
        self.clock.advance(4)
        a.connection_lost()
        self.assertEqual(self.w.usage.got, [])
        self.clock.advance(1)
        b.connection_lost()
        self.assertEqual(self.w.usage.got, [dict(
            started=0, total_time=8, waiting_time=3, total_bytes=15,
            mood="happy")])

    def test_data_after_partner_gone_dropped(self):
        """Bytes arriving while our close is under way go nowhere."""
        a, ga, b, gb = self.pair()
        a.connection_lost()
        b.data_received(b"late")
        self.assertEqual(ga.written, b"ok\n")


class BadInput(Base):
    def test_bad_handshake(self):
        """A first line that is not a handshake: 'bad handshake\\n', close,
        mood errory."""
        a, ga = self.w.connect("A")
        a.data_received(b"hello\n")
        self.assertEqual(ga.written, b"bad handshake\n")
        self.assertIn(("A", "close"), self.w.events)
        a.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["errory"])

    def test_too_long(self):
        """More than 1024 bytes without a newline: bad handshake."""
        a, ga = self.w.connect("A")
        a.data_received(b"x" * 1025)
        self.assertEqual(ga.written, b"bad handshake\n")

    def test_bytes_after_bad_handshake_ignored(self):
        """Once refused, more bytes change nothing."""
        a, ga = self.w.connect("A")
        a.data_received(b"nope\n")
        a.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual(ga.written, b"bad handshake\n")

    def test_impatient_in_same_read(self):
        """Bytes right after the handshake (before ok): impatient, and the
        connection never waits."""
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1) + b"early")
        self.assertEqual(ga.written, b"impatient\n")
        b, gb = self.w.connect("B")
        b.data_received(handshake(TOKEN, SIDE2))
        self.assertEqual(gb.written, b"")
        a.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["impatient"])

    def test_impatient_while_waiting(self):
        """Bytes while waiting for the partner: impatient, and it leaves
        the pairing."""
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        a.data_received(b"early")
        self.assertEqual(ga.written, b"impatient\n")
        b, gb = self.w.connect("B")
        b.data_received(handshake(TOKEN, SIDE2))
        self.assertEqual(gb.written, b"")

    def test_empty(self):
        """Gone before a whole line: mood empty."""
        a, ga = self.w.connect("A")
        a.data_received(b"please rel")
        a.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["empty"])

    def test_lonely(self):
        """Gone while waiting: mood lonely, and it is no longer waiting."""
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        self.clock.advance(5)
        a.connection_lost()
        self.assertEqual(self.w.usage.got, [dict(
            started=0, total_time=5, waiting_time=None, total_bytes=0,
            mood="lonely")])
        self.assertEqual(self.w.pairing.stats(), (0, 0, 0))

    def test_same_side_twice_then_partner(self):
        """Two connections of one side wait side by side; the partner pairs
        with the first, the second is closed as redundant."""
        a, ga = self.w.connect("A")
        a2, ga2 = self.w.connect("A2")
        a.data_received(handshake(TOKEN, SIDE1))
        a2.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual((ga.written, ga2.written), (b"", b""))
        b, gb = self.w.connect("B")
        b.data_received(handshake(TOKEN, SIDE2))
        self.assertEqual(ga.written, b"ok\n")
        self.assertEqual(ga2.written, b"")
        self.assertIn(("A2", "close"), self.w.events)
        a2.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["redundant"])

    def test_third_connection_waits_alone(self):
        """A third handshake after a pair was made waits afresh (it does
        not disturb the pair)."""
        a, ga, b, gb = self.pair()
        c, gc = self.w.connect("C")
        c.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual(gc.written, b"")
        a.data_received(b"still")
        self.assertEqual(gb.written, b"ok\nstill")

    def test_crowded(self):
        """More connections than max_waiting_per_token on one token: the
        newcomer gets 'crowded\\n', mood errory."""
        self.world(max_waiting_per_token=2)
        conns = [self.w.connect(f"C{i}") for i in range(3)]
        for c, _g in conns:
            c.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual([g.written for c, g in conns],
                         [b"", b"", b"crowded\n"])
        conns[2][0].connection_lost()
        self.assertEqual(self.w.usage.moods(), ["errory"])


class Timeouts(Base):
    def test_handshake_timeout(self):
        """No handshake within handshake_timeout: 'timeout\\n' and close."""
        self.world(handshake_timeout=10)
        a, ga = self.w.connect("A")
        self.clock.advance(9)
        self.assertEqual(ga.written, b"")
        self.clock.advance(1)
        self.assertEqual(ga.written, b"timeout\n")
        self.assertIn(("A", "close"), self.w.events)
        a.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["empty"])

    def test_pairing_timeout(self):
        """No partner within pairing_timeout: closed, mood jilted, and no
        longer waiting."""
        self.world(pairing_timeout=100)
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        self.clock.advance(100)
        self.assertIn(("A", "close"), self.w.events)
        self.assertEqual(self.w.pairing.stats(), (0, 0, 0))
        a.connection_lost()
        self.assertEqual(self.w.usage.moods(), ["jilted"])

    def test_pairing_cancels_timer(self):
        """Once paired, the pairing timer no longer fires."""
        self.world(pairing_timeout=100)
        a, ga, b, gb = self.pair()
        self.clock.advance(1000)
        self.assertNotIn(("A", "close"), self.w.events)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_idle_pair(self):
        """A pair silent both ways for idle_timeout is closed; traffic in
        either direction restarts the count."""
        self.world(idle_timeout=50)
        a, ga, b, gb = self.pair()
        self.clock.advance(40)
        b.data_received(b"x")
        self.clock.advance(40)
        self.assertNotIn(("A", "close"), self.w.events)
        self.clock.advance(10)
        self.assertIn(("A", "close"), self.w.events)
        self.assertIn(("B", "close"), self.w.events)

    def test_idle_pair_glue_moves_bytes(self):
        """Bytes a glue moves itself (Pair.count, the fast path and the
        splice) restart the idle count as well."""
        self.world(idle_timeout=50)
        a, ga, b, gb = self.pair()
        self.clock.advance(40)
        a._pair.count(1)
        self.clock.advance(40)
        self.assertNotIn(("A", "close"), self.w.events)
        self.clock.advance(10)
        self.assertIn(("A", "close"), self.w.events)
        self.assertIn(("B", "close"), self.w.events)

    def test_closing_connection_that_never_goes_is_aborted(self):
        """A connection we closed that does not go within close_timeout
        (a client that stops reading) is aborted."""
        self.world(close_timeout=30)
        a, ga = self.w.connect("A")
        a.data_received(b"bad\n")
        self.clock.advance(30)
        self.assertIn(("A", "abort"), self.w.events)

    def test_no_timers_left(self):
        """After every connection is gone, no timer is pending."""
        self.world(idle_timeout=50)
        a, ga, b, gb = self.pair()
        c, gc = self.w.connect("C")
        c.data_received(b"junk\n")
        for conn in (a, b, c):
            conn.connection_lost()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_no_timeouts_when_off(self):
        """With every timeout None, nothing is ever scheduled."""
        self.world(handshake_timeout=None, pairing_timeout=None,
                   close_timeout=None)
        a, ga = self.w.connect("A")
        a.data_received(handshake(TOKEN, SIDE1))
        self.assertEqual(self.clock.getDelayedCalls(), [])


class Tracing(Base):
    def test_trace(self):
        """set_trace sees every transition."""
        seen = []
        a = RelayConnection(self.w.connect("X")[1], self.w.pairing,
                            self.w.usage, self.clock, self.w.limits)
        a.set_trace(lambda old, inp, new: seen.append((old, inp, new)))
        a.start()
        a.data_received(b"bad\n")
        self.assertIn(("awaiting_handshake", "_handshake_bad", "closing"),
                      seen)

_pieces = st.sampled_from([
    handshake(TOKEN, SIDE1), handshake(TOKEN, SIDE2), handshake(TOKEN),
    handshake(TOKEN2, SIDE1), b"please relay ", b"\n", b"garbage\n",
    b"x" * 700, b"data",
])
_steps = st.lists(st.tuples(
    st.sampled_from(["data", "lose", "advance"]),
    st.integers(min_value=0, max_value=3), _pieces), max_size=40)


class AnyOrder(unittest.TestCase):
    @settings(max_examples=200, deadline=None)
    @given(_steps)
    def test_random_inputs(self, steps):
        """Any interleaving of bytes, losses and time over four connections
        never crashes; once all are gone there is one record per pair plus
        one per unpaired connection, nobody waits, and no timer is left."""
        clock = Clock()
        w = World(clock, handshake_timeout=30, pairing_timeout=60,
                  idle_timeout=90, close_timeout=20)
        conns = [w.connect(f"C{i}")[0] for i in range(4)]
        for kind, i, piece in steps:
            if kind == "data":
                conns[i].data_received(piece)
            elif kind == "lose":
                conns[i].connection_lost()
            else:
                clock.advance(len(piece) % 70)
        for c in conns:
            c.connection_lost()
        clock.advance(1000)
        paired = sum(1 for e in w.events if e[1] == "write"
                     and e[2] == b"ok\n")
        self.assertEqual(paired % 2, 0)
        self.assertEqual(len(w.usage.got), paired // 2 + (4 - paired))
        self.assertEqual(w.pairing.stats(), (0, 0, 0))
        self.assertEqual(clock.getDelayedCalls(), [])
