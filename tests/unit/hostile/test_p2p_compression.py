"""The P2P mesh's compression negotiation against a peer that refuses our
proposal and then sends in that method anyway (docs/p2p-decisions.md,
P2P-D3.4 and P2P-D3.6): the proposer decodes
m only until the peer NACKs it; a transmission in m after that is skipped
unread, NACKed "not-agreed", and the link closes. m stays agreed when it
was ACKed the other way (the peer's own proposal of it)."""
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import LocalLimits
from p2pmesh._config import ACK, NACK, PING, SET_CONNECTION_OPT

from ..p2p._peer import Harness

ZLIB = 4


class RefusedProposal(SynchronousTestCase):
    def test_refused_then_used(self):
        """We propose zlib, the peer NACKs it, then sends a zlib
        transmission: NACK [3, 0, 4, "not-agreed"], nothing inside is
        answered, the connection closes."""
        h = Harness(limits=LocalLimits(compression=(ZLIB,)))
        _, opened = h.open()
        self.assertIn((SET_CONNECTION_OPT, [0, ZLIB]), [o[:2] for o in opened])
        h.owner.answer = (ACK, [PING])
        h.feed(h.peer.msg(NACK, [SET_CONNECTION_OPT, 0, ZLIB, "unsupported"]))
        out = h.feed(h.peer.msg(PING, None, to=h.der), method=ZLIB)
        self.assertEqual([o[:2] for o in out],
                         [(NACK, [SET_CONNECTION_OPT, 0, ZLIB, "not-agreed"])])
        self.assertTrue(h.transport.disconnecting)

    def test_pending_proposal_decodes(self):
        """Before the peer's answer, the proposer decodes m (P2P-D3.4)."""
        h = Harness(limits=LocalLimits(compression=(ZLIB,)))
        h.open()
        h.owner.answer = (ACK, [PING])
        out = h.feed(h.peer.msg(PING, None, to=h.der), method=ZLIB)
        self.assertEqual([o[:2] for o in out], [(ACK, [PING])])
        self.assertFalse(h.transport.disconnecting)

    def test_agreed_the_other_way(self):
        """The peer proposed zlib (we ACKed) and NACKs ours: zlib is agreed
        in one direction, so its zlib transmission is read."""
        h = Harness(limits=LocalLimits(compression=(ZLIB,)))
        h.open()
        h.owner.answer = (ACK, [PING])
        h.feed(h.peer.msg(SET_CONNECTION_OPT, [0, ZLIB], to=h.der))
        h.feed(h.peer.msg(NACK, [SET_CONNECTION_OPT, 0, ZLIB, "unsupported"]))
        out = h.feed(h.peer.msg(PING, None, to=h.der), method=ZLIB)
        self.assertEqual([o[:2] for o in out], [(ACK, [PING])])
        self.assertFalse(h.transport.disconnecting)
