# ruff: noqa: E741  l and f are the leader and the follower throughout (tl, tf: their transports)
"""L2 connection protocol and L3 keepalives (Dilation protocol,
"L2 protocol", "L3 protocol"), two protocols joined by in-memory transports."""

from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._connection import DilatedConnectionProtocol
from wormhole._dilation._framing import (
    FOLLOWER_HANDSHAKE,
    LEADER_HANDSHAKE,
    derive_dilation_key,
)
from wormhole._dilation._records import Data, Ping

KEY = derive_dilation_key(b"\x07" * 32)


@implementer(I.IDilationConnector, I.IRecordReceiver)
class Recorder:
    def __init__(self, name, events):
        self.name = name
        self.events = events

    def add_candidate(self, connection):
        self.events.append((self.name + ".add_candidate", connection))

    def candidate_lost(self, connection):
        self.events.append((self.name + ".candidate_lost", connection))

    def got_record(self, connection, record):
        self.events.append((self.name + ".got_record", record))

    def connection_lost(self, connection):
        self.events.append((self.name + ".connection_lost", connection))

    def end_of_batch(self, connection):
        pass


class Base(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.events = []
        self.rl = Recorder("l", self.events)
        self.rf = Recorder("f", self.events)

    def make(self, is_leader, key=KEY, relay=None, **kw):
        r = self.rl if is_leader else self.rf
        p = DilatedConnectionProtocol(key, is_leader, r, self.clock, relay_handshake=relay,
                                      description="test", **kw)
        t = StringTransport()
        p.makeConnection(t)
        return p, t

    def pump(self, a, ta, b, tb):
        while ta.value() or tb.value():
            da, db = ta.value(), tb.value()
            ta.clear()
            tb.clear()
            if da and not ta.disconnecting:
                b.dataReceived(da)
            if db and not tb.disconnecting:
                a.dataReceived(db)

    def selected_pair(self, **kw):
        l, tl = self.make(True, **kw)
        f, tf = self.make(False, **kw)
        self.pump(l, tl, f, tf)
        l.select(self.rl)
        self.pump(l, tl, f, tf)
        f.select(self.rf)
        del self.events[:]
        return l, tl, f, tf


class Handshake(Base):
    def test_interfaces(self):
        """The protocol provides IDilatedConnection and IL3Connection."""
        p, _ = self.make(True)
        verifyObject(I.IDilatedConnection, p)
        verifyObject(I.IL3Connection, p)
        verifyObject(I.IDilationConnector, self.rl)
        verifyObject(I.IRecordReceiver, self.rl)

    def test_lines_first(self):
        """Each side starts with its handshake line; the Leader follows it
        with its Noise message at once, the Follower waits."""
        _l, tl = self.make(True)
        _f, tf = self.make(False)
        self.assertTrue(tl.value().startswith(LEADER_HANDSHAKE))
        self.assertGreater(len(tl.value()), len(LEADER_HANDSHAKE))
        self.assertEqual(tf.value(), FOLLOWER_HANDSHAKE)

    def test_kcms_and_selection(self):
        """The Follower's KCM makes the Leader offer the connection; the
        Leader's KCM (sent on selection) makes the Follower offer it;
        then records flow both ways."""
        l, tl = self.make(True)
        f, tf = self.make(False)
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events, [("l.add_candidate", l)])
        l.select(self.rl)
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events[1:], [("f.add_candidate", f)])
        f.select(self.rf)
        l.send_record(Data(1, 0, b"to follower"))
        f.send_record(Data(2, 0, b"to leader"))
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events[2:], [("f.got_record", Data(1, 0, b"to follower")),
                                           ("l.got_record", Data(2, 0, b"to leader"))])

    def test_wrong_key(self):
        """Peers with different keys never become candidates; both drop."""
        l, tl = self.make(True)
        f, tf = self.make(False, key=derive_dilation_key(b"\x08" * 32))
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events, [])
        self.assertTrue(tl.disconnecting or tf.disconnecting)
        l.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.events, [("l.candidate_lost", l)])

    def test_wrong_line(self):
        """Something that is not a Dilation peer is dropped at once."""
        l, tl = self.make(True)
        l.dataReceived(b"HTTP/1.1 400 Bad Request\r\n")
        self.assertTrue(tl.disconnecting)

    def test_two_leaders(self):
        """Two Leaders refuse each other's line."""
        a, ta = self.make(True)
        b, tb = self.make(True)
        a.dataReceived(tb.value())
        b.dataReceived(ta.value())
        self.assertTrue(ta.disconnecting and tb.disconnecting)

    def test_record_before_selection(self):
        """A record where a KCM was due drops the connection."""
        l, tl = self.make(True)
        f, tf = self.make(False)
        self.pump(l, tl, f, tf)
        # the Follower's side of the Noise session is ready: misuse it
        f._write_frame(b"\x04" + b"\x00" * 8)
        self.pump(l, tl, f, tf)
        self.assertTrue(tl.disconnecting)

    def test_relay(self):
        """Via a relay: the relay line first, the handshake line only after
        the relay's ok; a refusal drops the connection."""
        p, t = self.make(False, relay=b"please relay X for side Y\n")
        self.assertEqual(t.value(), b"please relay X for side Y\n")
        t.clear()
        p.dataReceived(b"o")
        self.assertEqual(t.value(), b"")
        p.dataReceived(b"k\n" + LEADER_HANDSHAKE[:5])
        self.assertEqual(t.value(), FOLLOWER_HANDSHAKE)
        q, tq = self.make(True, relay=b"please relay X for side Z\n")
        q.dataReceived(b"bad handshake\n")
        self.assertTrue(tq.disconnecting)

    def test_lost_after_selection(self):
        """Losing the selected connection tells the receiver, not the connector."""
        l, _tl, f, _tf = self.selected_pair()
        l.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.events, [("l.connection_lost", l)])
        self.assertEqual(self.clock.getDelayedCalls(), [f._keepalive.call])


class Keepalive(Base):
    def test_idle_keepalive(self):
        """After 30 s (the default ping_interval) with nothing written,
        each side writes a PING with id 0 (which a peer of either kind
        answers; the PONG of the Dilation protocol, "L3 protocol", makes the
        reference complain on stdout);
        a side that wrote something skips one tick."""
        l, tl, f, tf = self.selected_pair()
        l.send_record(Data(1, 0, b"x"))
        self.pump(l, tl, f, tf)
        del self.events[:]
        self.clock.advance(30)
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events, [("l.got_record", Ping(b"\x00\x00\x00\x00"))])
        self.clock.advance(30)
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events.count(("f.got_record", Ping(b"\x00\x00\x00\x00"))), 1)

    def test_leader_drops_silent_connection(self):
        """The Leader drops a connection it heard nothing from for two
        keepalive intervals (60 s)."""
        l, tl, _f, _tf = self.selected_pair()
        self.clock.advance(30)
        self.clock.advance(30)  # the Follower's PONG never arrives
        self.assertTrue(tl.disconnecting)
        l.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.events[-1], ("l.connection_lost", l))

    def test_not_selected_in_time(self):
        """A connection not selected within 60 s of being made (a peer that
        connects and says nothing, or half a handshake) is dropped, as
        either role; one that is selected in time keeps no such timer."""
        for is_leader in (True, False):
            p, t = self.make(is_leader)
            self.clock.advance(59)
            self.assertFalse(t.disconnecting)
            self.clock.advance(1)
            self.assertTrue(t.disconnecting)
            p.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.clock.getDelayedCalls(), [])
        l, _tl, f, _tf = self.selected_pair()
        self.assertEqual(sorted(self.clock.getDelayedCalls(), key=id),
                         sorted([l._keepalive.call, f._keepalive.call], key=id))

    def test_follower_drops_silent_connection(self):
        """The Follower too drops a connection it heard nothing from for
        60 s (docs/security.md, "Dilation"; the Dilation protocol,
        "L3 protocol", asks it of the Leader only), and says so."""
        _l, _tl, f, tf = self.selected_pair()
        self.clock.advance(59)
        self.assertFalse(tf.disconnecting)
        self.clock.advance(1)
        self.assertTrue(tf.disconnecting)
        f.connectionLost(Failure(ConnectionDone()))
        self.assertEqual(self.events[-1], ("f.connection_lost", f))

    def test_paused_reader_is_not_silence(self):
        """While we ourselves stopped reading (flow control), the peer's
        silence is ours: the connection is kept, and the peer has two whole
        intervals again from the first tick after we resume."""
        _l, _tl, f, tf = self.selected_pair()
        f.pauseProducing()
        self.clock.advance(120)
        self.assertFalse(tf.disconnecting)
        f.resumeProducing()
        self.clock.advance(59)
        self.assertFalse(tf.disconnecting)
        self.clock.advance(1)
        self.assertTrue(tf.disconnecting)

    def test_interval_is_ping_interval(self):
        """The one keepalive ticks at the interval it is given (dilate()'s
        ping_interval): a PING after one idle interval, the connection
        dropped after two silent ones; nothing else is scheduled."""
        _l, tl, _f, _tf = self.selected_pair(keepalive_interval=0.5)
        self.assertEqual(len(self.clock.getDelayedCalls()), 2)
        tl.clear()
        self.clock.advance(0.5)
        self.assertNotEqual(tl.value(), b"")  # the idle PING
        self.assertFalse(tl.disconnecting)
        self.clock.advance(0.5)  # its answer never delivered: silent twice
        self.assertTrue(tl.disconnecting)

    def test_leader_keeps_talking_connection(self):
        """Idle PINGs from the Follower keep the Leader's connection up."""
        l, tl, f, tf = self.selected_pair()
        for _ in range(6):
            self.clock.advance(30)
            self.pump(l, tl, f, tf)
        self.assertFalse(tl.disconnecting)
        self.assertFalse(tf.disconnecting)

    def test_ping_delivered(self):
        """PING/PONG records reach the receiver (the Manager answers PINGs)."""
        l, tl, f, tf = self.selected_pair()
        l.send_record(Ping(b"abcd"))
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events, [("f.got_record", Ping(b"abcd"))])


class ReadPause(Base):
    def test_pause_really_stops(self):
        """pauseProducing() stops the transport and holds frames already
        read; resumeProducing() delivers them in order."""
        l, tl, f, tf = self.selected_pair()
        f.pauseProducing()
        self.assertEqual(tf.producerState, "paused")
        l.send_record(Data(1, 0, b"a"))
        l.send_record(Data(1, 1, b"b"))
        self.pump(l, tl, f, tf)
        self.assertEqual(self.events, [])
        f.resumeProducing()
        self.assertEqual(tf.producerState, "producing")
        self.assertEqual(self.events, [("f.got_record", Data(1, 0, b"a")),
                                       ("f.got_record", Data(1, 1, b"b"))])

    def test_pause_inside_delivery(self):
        """A pause requested while one record is being delivered holds the
        rest of the same read."""
        orig = self.rf.got_record

        def pausing(connection, record):
            orig(connection, record)
            connection.pauseProducing()
        self.rf.got_record = pausing
        l, tl, f, tf = self.selected_pair()
        for i in range(3):
            l.send_record(Data(1, i, b"%d" % i))
        self.pump(l, tl, f, tf)
        self.assertEqual(len(self.events), 1)
        f.resumeProducing()
        self.assertEqual(len(self.events), 2)
