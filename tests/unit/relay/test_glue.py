"""The TCP glue on StringTransports, with a Clock: the Twisted side of
producers, half-close and abort, without sockets."""

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_relay._interfaces import ITransitRelay, ITransportGlue
from wormhole_relay._tcp import RelayTCPFactory
from wormhole_relay.server import build_relay

from ...relay._fakes import SIDE1, SIDE2, TOKEN, handshake


class HalfClosingTransport(StringTransport):
    write_closed = False
    aborted = False

    def loseWriteConnection(self):
        self.write_closed = True

    def abortConnection(self):
        self.aborted = True


class Glue(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.relay = build_relay(self.clock)
        self.factory = RelayTCPFactory(self.relay)

    def connect(self):
        p = self.factory.buildProtocol(None)
        t = HalfClosingTransport()
        p.makeConnection(t)
        return p, t

    def pair(self):
        pa, ta = self.connect()
        pb, tb = self.connect()
        pa.dataReceived(handshake(TOKEN, SIDE1))
        pb.dataReceived(handshake(TOKEN, SIDE2))
        return pa, ta, pb, tb

    def test_provides(self):
        """The TCP protocol provides ITransportGlue, the relay
        ITransitRelay."""
        p, t = self.connect()
        verifyObject(ITransportGlue, p)
        verifyObject(ITransitRelay, self.relay)

    def test_ok_and_relay(self):
        """ok\\n goes out on both transports, then bytes cross over."""
        pa, ta, pb, tb = self.pair()
        pa.dataReceived(b"abc")
        self.assertEqual(ta.value(), b"ok\n")
        self.assertEqual(tb.value(), b"ok\nabc")

    def test_producers_cross(self):
        """Each transport has the partner's reader as streaming producer:
        when one transport's buffer is full, reading from the other
        pauses, and resumes with it."""
        pa, ta, pb, tb = self.pair()
        self.assertTrue(ta.streaming)
        self.assertTrue(tb.streaming)
        tb.producer.pauseProducing()
        self.assertEqual(ta.producerState, "paused")
        self.assertEqual(tb.producerState, "producing")
        tb.producer.resumeProducing()
        self.assertEqual(ta.producerState, "producing")
        ta.producer.pauseProducing()
        self.assertEqual(tb.producerState, "paused")

    def test_relaying_skips_the_machine(self):
        """Once paired, bytes go from glue to glue: the machines see no
        input per chunk, and the pair still counts every byte
        (StringTransports: no splice here)."""
        seen = []
        self.relay.set_trace(lambda old, inp, new: seen.append(inp))
        pa, ta, pb, tb = self.pair()
        del seen[:]
        pa.dataReceived(b"abc")
        pb.dataReceived(b"de")
        self.assertEqual(seen, [])
        self.assertEqual(tb.value(), b"ok\nabc")
        self.assertEqual(ta.value(), b"ok\nde")
        pa.connectionLost(None)
        pb.connectionLost(None)
        self.assertEqual(self.relay.usage.records()[0]["total_bytes"], 5)

    def test_no_splice_without_sockets(self):
        """A pair whose transports are not Twisted TCP connections (here
        StringTransports; in life TLS or WebSocket) is never spliced."""
        pa, ta, pb, tb = self.pair()
        self.assertIsNone(pa._splicer)
        self.assertIsNone(pb._splicer)

    def test_splice_only_bare_tcp(self):
        """Only two bare Twisted TCP sockets splice: not a socket that
        speaks TLS, not anything else, and not with splice turned off."""
        from twisted.internet import tcp
        from twisted.internet.interfaces import ISSLTransport
        from zope.interface import directlyProvides

        def bare():
            p = self.factory.buildProtocol(None)
            p.transport = tcp.Connection.__new__(tcp.Connection)
            return p
        a, b = bare(), bare()
        self.factory.splice = True
        self.assertTrue(a._can_splice_with(b))
        directlyProvides(b.transport, ISSLTransport)
        self.assertFalse(a._can_splice_with(b))
        self.assertFalse(a._can_splice_with(self.connect()[0]))
        self.factory.splice = False
        self.assertFalse(a._can_splice_with(bare()))

    def test_stop_producing_is_ignored(self):
        """A transport going away calls stopProducing on its producer; the
        partner is closed by the machine, not by that call."""
        pa, ta, pb, tb = self.pair()
        tb.producer.stopProducing()
        self.assertEqual(ta.producerState, "producing")
        self.assertFalse(ta.write_closed)

    def test_partner_lost(self):
        """When A goes, B stops streaming from A and is half-closed after
        what it was sent; no record until B goes too."""
        pa, ta, pb, tb = self.pair()
        pa.dataReceived(b"last")
        pa.connectionLost(None)
        self.assertIsNone(tb.producer)
        self.assertTrue(tb.write_closed)
        self.assertEqual(tb.value(), b"ok\nlast")
        self.assertEqual(self.relay.usage.records(), [])
        pb.connectionLost(None)
        self.assertEqual([r["mood"] for r in self.relay.usage.records()],
                         ["happy"])
        self.assertEqual(self.relay.connections(), [])

    def test_close_resumes_reading(self):
        """B was paused because A's transport was full; when A goes, B is
        half-closed and reads again, or it would never see its client
        close (and the pair's record would wait for the close timer)."""
        pa, ta, pb, tb = self.pair()
        ta.producer.pauseProducing()
        self.assertEqual(tb.producerState, "paused")
        pa.connectionLost(None)
        self.assertTrue(tb.write_closed)
        self.assertEqual(tb.producerState, "producing")

    def test_refusal_half_closes_then_aborts(self):
        """A bad handshake is answered, the write side closed, and if the
        client never closes, the connection is aborted after
        close_timeout."""
        p, t = self.connect()
        p.dataReceived(b"nope\n")
        self.assertEqual(t.value(), b"bad handshake\n")
        self.assertTrue(t.write_closed)
        self.assertFalse(t.aborted)
        self.clock.advance(self.relay.limits.close_timeout)
        self.assertTrue(t.aborted)

    def test_drop_all(self):
        """drop_all aborts every connection; its Deferred fires once they
        are all gone."""
        pa, ta, pb, tb = self.pair()
        d = self.relay.drop_all()
        self.assertTrue(ta.aborted and tb.aborted)
        self.assertNoResult(d)
        pa.connectionLost(None)
        pb.connectionLost(None)
        self.successResultOf(d)
