"""Our ``wormhole send`` (a real process) against a hostile transfer-v2
receiver built on our library (``_v2_peer``): one
case per class of refusal or failure the receiver can cause (a rejection
with a hostile reason, an answer over the limits, a malformed answer, a
wrong acknowledgement, a receiver that accepts and then stops reading),
each asserting the one ``ERROR:`` line, the exit status, a clean
terminal, bounded memory and time (``timeout``, ``--peer-timeout``)."""
import os
import stat

from twisted.internet import defer

from wormhole.transfer_v2 import _framing
from wormhole.transfer_v2 import _messages as M

from ._json_victim import JSONVictim
from ._v2_peer import V2PeerCase, first_of


class HostileReceiver(V2PeerCase):

    @defer.inlineCallbacks
    def send(self, answer, size=5000):
        """The victim sends a file of ``size`` bytes; our peer takes its
        offer and runs ``answer(offer_channel, offer_record)``. Fires with
        the victim once it ended."""
        path = os.path.join(os.path.abspath(self.mktemp()))
        with open(path, "wb") as f:
            f.write(b"s" * size)
        peer, victim = self.pair("send", "receive", path)
        yield peer.start()
        channel = yield peer.next_offer()
        offer = yield channel.next_record()
        # (its mode too: our peer declares the file-modes feature)
        mode = stat.S_IMODE(os.stat(path).st_mode)
        self.assertEqual(offer, M.FileOffer(os.path.basename(path), offer.timestamp, size,
                                            mode=mode))
        yield answer(channel, offer)
        yield victim.ended
        return victim

    @defer.inlineCallbacks
    def test_declined(self):
        """The words of a human's no (classic's): declined, exit 3."""
        def answer(channel, offer):
            channel.send(M.OfferReject("transfer rejected"))
            return first_of(channel.lost)
        victim = yield self.send(answer)
        self.assert_error(victim, "the receiver declined: transfer rejected", status=3)

    @defer.inlineCallbacks
    def test_rejected_with_a_hostile_reason(self):
        """Any other reason: the receiver gave up (exit 1), its words escaped."""
        def answer(channel, offer):
            channel.send(M.OfferReject("no\x1b[2J\x07 thanks"))
            return first_of(channel.lost)
        victim = yield self.send(answer)
        self.assert_error(victim, "the receiver gave up: no\\x1b[2J\\x07 thanks")

    @defer.inlineCallbacks
    def test_answer_over_the_limit(self):
        def answer(channel, offer):
            channel.send_raw((_framing.MAX_RECORD + 1).to_bytes(4, "big"))
            return first_of(channel.lost)
        victim = yield self.send(answer)
        self.assert_error(victim, f"a record of {_framing.MAX_RECORD + 1} bytes "
                                  f"(at most {_framing.MAX_RECORD})")

    @defer.inlineCallbacks
    def test_malformed_answer(self):
        def answer(channel, offer):
            channel.send(b"\x63junk")
            return first_of(channel.lost)
        victim = yield self.send(answer)
        self.assert_error(victim, "unknown record kind 99")

    @defer.inlineCallbacks
    def test_wrong_acknowledgement(self):
        victim = yield self.send(lambda channel, offer: channel.acknowledge_wrongly())
        self.assert_error(victim, "the peer received different bytes: 5000 bytes with hash "
                                  + "00" * 32)

    @defer.inlineCallbacks
    def test_accepts_then_stops_reading(self):
        """Item 4: the receiver accepts and then takes nothing more (its
        flow control stops our writes) and never answers: the sender
        gives up after --peer-timeout, closing included, exit 1."""
        def answer(channel, offer):
            channel.send(M.OfferAccept())
            channel.stop_reading()
            return defer.succeed(None)
        victim = yield self.send(answer, size=16 * 1024 * 1024)
        self.assert_error(victim, "(offer cancelled: gave up waiting for the receiver to take or "
                                  f"acknowledge the data: nothing came for {self.PEER_TIMEOUT} "
                                  "seconds (--peer-timeout))")


class HostileReceiverJSON(JSONVictim, HostileReceiver):
    """The same attacks on ``wormhole send --json`` (the library's
    ``Transfer`` behind JSON lines): the same ERROR line and status, and
    stdout holds JSON lines only, the one error line saying the same."""
