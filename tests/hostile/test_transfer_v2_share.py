"""Our ``wormhole share`` (a real process) against a hostile transfer-v2
peer in ``connect`` mode built on our library (``_v2_peer``): an offer
refused before it was known and one with an
unusable name end the command with its one ``ERROR:`` line and exit 1;
a wrong acknowledgement of our own offer is reported, also when an
incoming offer failed too. Each asserts the line, the exit status, that
nothing outside the receive folder changed (links planted at every
hidden name), bounded memory and time."""
import os

import msgpack
from twisted.internet import defer

from wormhole.session import escape_text
from wormhole.transfer_v2 import _messages as M

from ..cli._json_schema import lines_of
from ._json_victim import JSONVictim
from ._v2_peer import V2PeerCase, first_of

BEFORE_KNOWN = ("refused an offer from the peer before it was known: protocol error from "
                "the offering side: ")
MISMATCH = "the peer received different bytes: 5000 bytes with hash " + "00" * 32


class HostileSharer(V2PeerCase):

    def our_file(self):
        path = os.path.abspath(self.mktemp())
        with open(path, "wb") as f:
            f.write(b"o" * 5000)
        return path

    @defer.inlineCallbacks
    def offer_to(self, peer, first):
        """Our peer's offer (a record, or a record's raw bytes: framed as
        negotiated): done when the victim answered or closed its subchannel."""
        channel = yield peer.offer()
        channel.send(first)
        yield first_of(channel.next_record(), channel.lost)
        channel.close()

    @defer.inlineCallbacks
    def acknowledge_wrongly(self, peer):
        """Accept the victim's offer, take its bytes, acknowledge them with
        a wrong hash."""
        channel = yield peer.next_offer()
        yield channel.next_record()
        yield channel.acknowledge_wrongly()

    @defer.inlineCallbacks
    def test_refused_before_known(self):
        peer, victim = self.pair("share", "connect", base="d")
        yield peer.start()
        raw = bytes([M.KIND_DIRECTORY_OFFER]) + msgpack.packb(
            {"base": "d", "size": 1, "files": [["a"], ["a"]]})
        yield self.offer_to(peer, raw)
        peer.end_session()
        yield victim.ended
        self.assert_error(victim, BEFORE_KNOWN + "the same path is offered twice")
        self.assert_outside_untouched(victim)

    @defer.inlineCallbacks
    def test_unusable_name(self):
        peer, victim = self.pair("share", "connect", base="..")
        yield peer.start()
        yield self.offer_to(peer, M.FileOffer("..", 0, 1))
        peer.end_session()
        yield victim.ended
        self.assert_error(victim, "the sender offered an unusable name '..'")
        self.assert_outside_untouched(victim)

    @defer.inlineCallbacks
    def test_our_offer_acknowledged_wrongly(self):
        """Item 5: the peer acknowledges our own offer with a wrong hash."""
        peer, victim = self.pair("share", "connect", self.our_file())
        yield peer.start()
        yield self.acknowledge_wrongly(peer)
        peer.end_session()
        yield victim.ended
        self.assert_error(victim, MISMATCH)
        self.assert_outside_untouched(victim)

    @defer.inlineCallbacks
    def test_both_ways_fail(self):
        """Item 5: an incoming offer fails and ours is acknowledged with a
        wrong hash: both are said, each on its line, and the command fails."""
        peer, victim = self.pair("share", "connect", self.our_file())
        yield peer.start()
        yield self.acknowledge_wrongly(peer)
        yield self.offer_to(peer, M.FileOffer("..", 0, 1))
        peer.end_session()
        yield victim.ended
        self.assert_error(victim, "2 of 2")
        self.assert_both_said(victim)
        self.assert_outside_untouched(victim)

    def assert_both_said(self, victim):
        """Each direction's failure said on its line above the ERROR line."""
        self.assertIn(MISMATCH.encode(), victim.stderr.split(b"ERROR")[0], victim.describe())
        self.assertIn(b"unusable name '..'", victim.stderr.split(b"ERROR")[0],
                      victim.describe())


class HostileSharerJSON(JSONVictim, HostileSharer):
    """The same attacks on ``wormhole share --json`` (the library's
    ``Share`` behind JSON lines): the same ERROR line and status, and
    stdout holds JSON lines only, the one error line saying the same."""

    def assert_both_said(self, victim):
        """Our offer's failure is an offer-failed line, the peer's offer's
        refusal a refused line."""
        lines = lines_of(victim.run)
        [failed] = [e for e in lines if e["type"] == "offer-failed"]
        self.assertIn(MISMATCH, failed["message"], victim.describe())
        [refused] = [e for e in lines if e["type"] == "refused"]
        self.assertIn("unusable name '..'", escape_text(refused["reason"]), victim.describe())
