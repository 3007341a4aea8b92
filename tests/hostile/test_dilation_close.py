"""A keyed Dilation peer that never answers our CLOSE (Dilation protocol, "L5
subchannels": a CLOSE is answered by a CLOSE), against our real Manager,
L4 and L5 on a Clock (docs/security.md, "Dilation"). It keeps the
connection alive (PINGs, ACKs) so that only the closing wait can end what
it holds: the subchannels we closed are forgotten after 300 s."""

from twisted.internet.protocol import Factory, Protocol
from twisted.trial import unittest

from wormhole._dilation._endpoints import SubchannelConnectorEndpoint
from wormhole._dilation._records import Ack, Close, Data, Open, Ping
from wormhole._dilation._subchannel import CLOSE_TIMEOUT

from ._dilation_peer import connected_pair

KEEPALIVE = 20  # seconds between the peer's PINGs, under the 60 s silence


class Closer(Protocol):
    """An application that says something and closes, as a transfer-v2
    offer subchannel does when its offer is over."""

    def connectionMade(self):
        self.lost = False
        self.transport.write(b"done")
        self.transport.loseConnection()

    def connectionLost(self, reason):
        self.lost = True


class NeverAnswersClose(unittest.TestCase):
    def test_closed_subchannels_forgotten(self):
        """We open 50 subchannels and close each; the peer ACKs every
        record and PINGs every 20 s, but never sends a CLOSE back. For
        300 s the 50 wait in "closing"; then every one is forgotten (the
        registry, L4 inbound and outbound hold none, each protocol got
        connectionLost), and the connection is still up."""
        v, p = connected_pair(we_lead=True)
        made = []
        for _ in range(50):
            SubchannelConnectorEndpoint("offer", v.registry).connect(
                Factory.forProtocol(Closer)).addCallback(made.append)
        p.read(v.take_output())
        opens = [r.scid for r in p.records if isinstance(r, Open)]
        closes = [r.scid for r in p.records if isinstance(r, Close)]
        self.assertEqual(opens, [2 * i + 1 for i in range(50)])
        self.assertEqual(closes, opens)
        self.assertEqual(len([r for r in p.records if isinstance(r, Data)]), 50)
        ping = 0
        while v.clock.seconds() + KEEPALIVE < CLOSE_TIMEOUT:
            self.assertEqual(len(v.registry._open), 50)
            p.read(v.take_output())
            last = max(getattr(r, "seqnum", -1) for r in p.records)
            ping += 1
            v.conn.dataReceived(p.frame(Ack(last)) + p.frame(Ping(ping.to_bytes(4, "big"))))
            v.clock.advance(KEEPALIVE)
        self.assertTrue(all(not proto.lost for proto in made))
        v.clock.advance(CLOSE_TIMEOUT - v.clock.seconds())
        self.assertEqual(v.registry._open, {})
        self.assertEqual(v.outbound._subchannels, set())
        self.assertEqual(v.inbound._subchannels, {})
        self.assertTrue(all(proto.lost for proto in made))
        self.assertFalse(v.transport.disconnecting)
        # a CLOSE that comes at last is for an unknown subchannel: logged
        # (bounded, docs/security.md) and ACKed, nothing else
        p.read(v.take_output())
        del p.records[:]
        v.conn.dataReceived(p.frame(Close(1, 100)))
        p.read(v.take_output())
        self.assertEqual([r for r in p.records if isinstance(r, (Open, Data, Close))], [])
        self.assertFalse(v.transport.disconnecting)
