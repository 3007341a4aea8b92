"""A hostile Dilation peer that holds the key (the other end of the
wormhole) against our real Manager, L4 and L5, in memory on a Clock
(docs/security.md, "Dilation"). Each case measures what the
victim keeps: the unacknowledged queue, the data waiting for a listener,
the subchannels it made."""

from twisted.internet.interfaces import IPushProducer
from twisted.internet.protocol import Factory, Protocol
from twisted.trial import unittest
from zope.interface import implementer

from wormhole._dilation._endpoints import (
    SubchannelConnectorEndpoint,
    SubchannelListenerEndpoint,
)
from wormhole._dilation._framing import derive_dilation_key
from wormhole._dilation._inbound import (
    DEFAULT_MAX_BACKLOG,
    DEFAULT_MAX_PEER_SUBCHANNELS,
)
from wormhole._dilation._outbound import DEFAULT_MAX_UNACKED, RECORD_COST
from wormhole._dilation._records import Ack, Close, Data, Open
from wormhole._dilation._subchannel import WAITING_COST

from ._dilation_peer import Victim, connected_pair

CHUNK = 64 * 1024


@implementer(IPushProducer)
class Writer(Protocol):
    """An application that writes 64 KiB whenever it is not paused, as a
    well-behaved streaming producer does."""

    def connectionMade(self):
        self.paused = False
        self.written = 0
        self.transport.registerProducer(self, True)

    def pauseProducing(self):
        self.paused = True

    def resumeProducing(self):
        self.paused = False

    def stopProducing(self):
        self.paused = True

    def write_while_allowed(self, limit):
        while not self.paused and self.written < limit:
            self.transport.write(b"\x5a" * CHUNK)
            self.written += CHUNK


class Recorder(Protocol):
    def connectionMade(self):
        self.factory.made.append(self)


def recorder_factory():
    f = Factory.forProtocol(Recorder)
    f.made = []
    return f


class NeverAcks(unittest.TestCase):
    def test_reads_but_never_acks(self):
        """The peer takes every byte we write and never ACKs: our writer is
        paused once the unacknowledged records cost more than 16 MiB, so
        we keep at most that plus one write of 256 MiB offered; its ACK
        then lets the writer go on."""
        v, p = connected_pair(we_lead=True)
        got = []
        SubchannelConnectorEndpoint("bulk", v.registry).connect(
            Factory.forProtocol(Writer)).addCallback(got.append)
        writer = got[0]
        writer.write_while_allowed(256 * 1024 * 1024)
        p.read(v.take_output())  # the peer reads it all (TCP never fills)
        self.assertTrue(writer.paused)
        kept = v.outbound.unacked_bytes()
        self.assertLessEqual(kept, DEFAULT_MAX_UNACKED + RECORD_COST + CHUNK)
        self.assertGreater(kept, DEFAULT_MAX_UNACKED)
        self.assertEqual(writer.written, (DEFAULT_MAX_UNACKED // (CHUNK + RECORD_COST) + 1) * CHUNK)
        # what the peer read is what we keep: nothing more was produced
        sent = [r for r in p.records if isinstance(r, Data)]
        self.assertEqual(sum(len(r.data) for r in sent), writer.written)
        v.conn.dataReceived(p.frame(Ack(sent[-1].seqnum)))
        self.assertFalse(writer.paused)
        self.assertEqual(v.outbound.unacked_bytes(), 0)


class BadOpens(unittest.TestCase):
    def test_reserved_and_wrong_parity_refused(self):
        """As Follower the peer must use even ids: its OPENs for id 0 and
        for the odd (our) id 1 are answered with CLOSE, reach no listener,
        and their DATA is discarded; its OPEN for id 2 is accepted."""
        v, p = connected_pair(we_lead=True)
        f = recorder_factory()
        SubchannelListenerEndpoint("x", v.registry).listen(f)
        v.run_eventually()
        v.conn.dataReceived(p.frame(Open(0, 0, "x")) + p.frame(Open(1, 1, "x"))
                            + p.frame(Data(1, 2, b"orphan")) + p.frame(Open(2, 3, "x")))
        v.run_eventually()
        p.read(v.take_output())
        self.assertEqual(p.records, [Close(0, 0), Close(1, 1), Ack(3)])
        self.assertEqual([r.transport.getPeer().scid for r in f.made], [2])
        # our own first subchannel still gets id 1, untouched by the peer
        got = []
        SubchannelConnectorEndpoint("x", v.registry).connect(
            Factory.forProtocol(Protocol)).addCallback(got.append)
        self.assertEqual(got[0].transport.getPeer().scid, 1)

    def test_open_flood(self):
        """5000 OPENs: the first 1024 make subchannels, the next 1024 are
        each answered with a CLOSE and make nothing, and the one after
        that drops the connection (every CLOSE waits for an ACK this peer
        may never send)."""
        v, p = connected_pair(we_lead=False)
        n, limit = 5000, DEFAULT_MAX_PEER_SUBCHANNELS
        v.conn.dataReceived(b"".join(p.frame(Open(2 * i + 1, i, "x")) for i in range(n)))
        p.read(v.take_output())
        closes = [r.scid for r in p.records if isinstance(r, Close)]
        self.assertEqual(closes, [2 * i + 1 for i in range(limit, 2 * limit)])
        self.assertEqual(len(v.registry._open), limit)
        self.assertTrue(v.transport.disconnecting)
        self.assertEqual(v.outbound.unacked_bytes(), limit * RECORD_COST)


class NobodyListens(unittest.TestCase):
    def test_data_for_unheard_subprotocol(self):
        """The peer opens a subchannel nobody listens for and pours DATA
        into it: once 4 MiB wait, the victim stops reading its connection
        (as TCP would then stop delivering, so does this test); what waits
        is at most 4 MiB plus one record, and a listener takes it all."""
        v, p = connected_pair(we_lead=True)
        v.conn.dataReceived(p.frame(Open(2, 0, "nobody")))
        seq, fed = 1, 0
        record = bytes(CHUNK)
        while v.transport.producerState != "paused" and fed < 64 * 1024 * 1024:
            v.conn.dataReceived(p.frame(Data(2, seq, record)))
            seq += 1
            fed += CHUNK
        self.assertEqual(v.transport.producerState, "paused")
        self.assertEqual(v.inbound.backlog_bytes(), DEFAULT_MAX_BACKLOG + CHUNK)
        f = recorder_factory()
        SubchannelListenerEndpoint("nobody", v.registry).listen(f)
        v.run_eventually()
        self.assertEqual(v.inbound.backlog_bytes(), 0)
        self.assertEqual(v.transport.producerState, "producing")


    def test_open_close_cycles(self):
        """OPEN then CLOSE, again and again, for a subprotocol nobody
        listens for: each such subchannel waits for a listener counting
        1 KiB, so after 4096 of them the victim stops reading; a listener
        then takes them all (and sees each open and close)."""
        v, p = connected_pair(we_lead=True)
        seq = 0
        while v.transport.producerState != "paused" and seq < 2 * 100000:
            scid = 2 * (seq // 2 + 1)
            v.conn.dataReceived(p.frame(Open(scid, seq, "nobody"))
                                + p.frame(Close(scid, seq + 1)))
            seq += 2
        self.assertEqual(seq // 2, DEFAULT_MAX_BACKLOG // WAITING_COST + 1)
        self.assertEqual(v.transport.producerState, "paused")
        f = recorder_factory()
        SubchannelListenerEndpoint("nobody", v.registry).listen(f)
        v.run_eventually()
        self.assertEqual(len(f.made), seq // 2)
        self.assertEqual(v.inbound.backlog_bytes(), 0)
        self.assertEqual(v.transport.producerState, "producing")


class Silence(unittest.TestCase):
    def test_connects_and_says_nothing(self):
        """Someone connects to our port and sends nothing (or half a
        handshake): dropped exactly 60 s after connecting."""
        v = Victim(derive_dilation_key(b"\x01" * 32), we_lead=True)
        v.conn.dataReceived(b"Magic-Wormhole Dilation Handshake v1 Fol")
        v.clock.advance(59.9)
        self.assertFalse(v.transport.disconnecting)
        v.clock.advance(0.1)
        self.assertTrue(v.transport.disconnecting)

    def test_follower_drops_silent_leader(self):
        """A Leader that goes silent after selection: our Follower drops
        the connection after exactly 60 s on the clock, not before."""
        v, _p = connected_pair(we_lead=False)
        v.clock.advance(59.9)
        self.assertFalse(v.transport.disconnecting)
        v.clock.advance(0.1)
        self.assertTrue(v.transport.disconnecting)
