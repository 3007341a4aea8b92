"""The per-connection machine (P2P-D6.2, 3.4, 5.2) with StringTransport,
Clock and a recording owner."""

from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import LocalLimits, SubnetConfig, _framing, _keys, _message, _payload
from p2pmesh._config import ACK, ANNOUNCE, NACK, PING, SET_CONNECTION_OPT, SHOUT
from p2pmesh._requests import RequestTimeout

from ...p2p._fixtures import test_keys
from ._peer import SUBNET, Harness


class Handshake(SynchronousTestCase):

    def test_first_message_is_subnet_to_self(self):
        """At connect the only message is SET_CONNECTION_OPT [2, setting]
        with To = From while the peer key is unknown (P2P-D6.2)."""
        h = Harness()
        self.assertEqual(h.turn(), [(SET_CONNECTION_OPT,
                                     [2, SUBNET.as_setting()], h.der)])

    def test_to_is_expected_key_when_dialing_known_peer(self):
        """A dial with a known key sends To = that key."""
        h = Harness(expected_key=test_keys()["B"][1])
        self.assertEqual(h.turn()[0][2], test_keys()["B"][1])

    def test_open_after_both_acks(self):
        """ACK of the peer's subnet, then open once ours is ACKed."""
        h = Harness()
        sent, out = h.open()
        self.assertEqual(out, [(ACK, [SET_CONNECTION_OPT, 2,
                                      SUBNET.as_setting()],
                                h.peer.der)])
        self.assertEqual(h.owner.events, [("open",)])

    def test_not_open_with_one_ack(self):
        """Our ACK alone does not open the link."""
        h = Harness()
        h.turn()
        h.feed(h.peer.msg(SET_CONNECTION_OPT, [2, SUBNET.as_setting()]))
        self.assertEqual(h.owner.events, [])

    def test_peer_repeats_its_subnet_before_our_ack(self):
        """The peer's subnet option twice before ours is ACKed: ACKed
        again, the handshake goes on (it raised Automat's NoTransition out
        of dataReceived in ``theirs_acked``; found by the audit of refused
        inputs, docs/state-machines/refusals.md)."""
        h = Harness()
        h.turn()
        subnet = SUBNET.as_setting()
        answers = [h.feed(h.peer.msg(SET_CONNECTION_OPT, [2, subnet])) for _ in range(2)]
        self.assertEqual([[m[0] for m in out] for out in answers], [[ACK], [ACK]])
        self.assertEqual(h.owner.events, [])
        h.feed(h.peer.msg(ACK, [SET_CONNECTION_OPT, 2, subnet]))
        self.assertEqual(h.owner.events, [("open",)])

    def test_subnet_mismatch_nack_then_close(self):
        """A different constant: NACK [3, 2, setting, "subnet-mismatch"],
        flushed, then loseConnection."""
        h = Harness()
        h.turn()
        other = SubnetConfig(k=8).as_setting()
        out = h.feed(h.peer.msg(SET_CONNECTION_OPT, [2, other]))
        self.assertEqual(out, [(NACK, [SET_CONNECTION_OPT, 2, other,
                                       "subnet-mismatch"], h.peer.der)])
        self.assertTrue(h.transport.disconnecting)

    def test_subnet_type_mismatch(self):
        """1.0 for k is a mismatch: types are compared too."""
        h = Harness()
        h.turn()
        other = SUBNET.as_setting()
        other[0] = 20.0
        out = h.feed(h.peer.msg(SET_CONNECTION_OPT, [2, other]))
        self.assertEqual(out[0][1][-1], "subnet-mismatch")
        self.assertTrue(h.transport.disconnecting)

    def test_nack_of_ours_closes(self):
        """Receiving NACK for our subnet closes too."""
        h = Harness()
        h.turn()
        h.feed(h.peer.msg(NACK, [SET_CONNECTION_OPT, 2, SUBNET.as_setting(),
                                 "subnet-mismatch"]))
        self.assertTrue(h.transport.disconnecting)

    def test_beta_mismatch_closes(self):
        """A 3072-bit peer's bytes are a framing error at β = 2048."""
        h = Harness()
        h.turn()
        key = _keys.generate_private_key(3072)
        der = _keys.public_der(key)
        raw = _message.encode_message(
            key, der, der, SET_CONNECTION_OPT,
            _payload.pack([2, SubnetConfig(beta=3072).as_setting()]))
        h.conn.dataReceived(_framing.encode_transmission(0, raw))
        self.assertTrue(h.transport.disconnecting)

    def test_other_message_before_open_closes(self):
        """Before Open only ACK, NACK and option 2 pass."""
        h = Harness()
        h.turn()
        h.feed(h.peer.msg(PING, None))
        self.assertTrue(h.transport.disconnecting)
        self.assertEqual(h.owner.events, [])

    def test_handshake_timeout(self):
        """No handshake within 10 s: close."""
        h = Harness()
        h.turn()
        h.clock.advance(10)
        self.assertTrue(h.transport.disconnecting)

    def test_wrong_key_when_dialing_closes(self):
        """A dialed peer whose key is not the expected one: close."""
        h = Harness(expected_key=test_keys()["C"][1])
        h.turn()
        h.feed(h.peer.msg(SET_CONNECTION_OPT, [2, SUBNET.as_setting()]))
        self.assertTrue(h.transport.disconnecting)

    def test_lost_reports_closed(self):
        """connectionLost reaches the owner once."""
        h = Harness()
        h.open()
        h.conn.connectionLost(None)
        self.assertEqual(h.owner.events, [("open",), ("closed",)])


class Answers(SynchronousTestCase):

    def test_request_timeout_closes(self):
        """No answer within 5 s: the FIFO cannot resync, close."""
        h = Harness()
        h.open()
        d = h.conn.request(PING, None)
        h.turn()
        h.clock.advance(5)
        self.failureResultOf(d, RequestTimeout)
        self.assertTrue(h.transport.disconnecting)
        self.assertIn(("request_failed",), h.owner.events)

    def test_answers_match_fifo(self):
        """Two requests, two ACKs in order."""
        h = Harness()
        h.open()
        d1 = h.conn.request(PING, None)
        d2 = h.conn.request(PING, None)
        h.feed(h.peer.msg(ACK, [PING]), h.peer.msg(ACK, [PING]))
        self.assertEqual(self.successResultOf(d1), [PING])
        self.assertEqual(self.successResultOf(d2), [PING])

    def test_unmatched_answer_closes(self):
        """An ACK with nothing pending: close (P2P-D5.2)."""
        h = Harness()
        h.open()
        h.feed(h.peer.msg(ACK, [PING]))
        self.assertTrue(h.transport.disconnecting)

    def test_answers_in_arrival_order(self):
        """A slow answer holds back the later ones (P2P-D5.2)."""
        from twisted.internet import defer
        h = Harness()
        h.open()
        slow = defer.Deferred()
        h.owner.answer = slow
        h.feed(h.peer.msg(15, ["a"], to=h.der))
        h.owner.answer = (ACK, [PING])
        out = h.feed(h.peer.msg(PING, None, to=h.der))
        self.assertEqual(out, [])
        slow.callback((ACK, [15, "done"]))
        self.assertEqual([o[:2] for o in h.turn()],
                         [(ACK, [15, "done"]), (ACK, [PING])])

    def test_malformed_request_nack(self):
        """Reserved bits on a request: NACK "malformed"."""
        h = Harness()
        h.open()
        raw = bytearray(h.peer.msg(PING, None, to=h.der))
        raw[261] |= 2
        # re-sign: the bits are inside the signed part
        unsigned = bytes(raw[256:])
        raw = _keys.sign(h.peer.private, unsigned) + unsigned
        out = h.feed(raw)
        self.assertEqual(out[0][:2], (NACK, [PING, "malformed"]))

    def test_reserved_opcode_unsupported(self):
        """Opcodes 12–14: NACK [op, "unsupported"], never delivered."""
        h = Harness()
        h.open()
        out = h.feed(h.peer.msg(12, None, to=h.der),
                     h.peer.msg(14, [1], to=h.der))
        self.assertEqual([o[:2] for o in out],
                         [(NACK, [12, "unsupported"]),
                          (NACK, [14, "unsupported"])])
        self.assertEqual(h.owner.events, [("open",)])

    def test_bad_msgpack_broadcast_dropped(self):
        """A SHOUT with bad msgpack is dropped, the link stays."""
        h = Harness()
        h.open()
        h.feed(h.peer.msg(SHOUT, None, payload=b"\xc1"))
        self.assertIn(("refused", SHOUT, "malformed"), h.owner.events)
        self.assertFalse(h.transport.disconnecting)


class CompressionNegotiation(SynchronousTestCase):

    def test_proposals_after_open(self):
        """Once open, each decodable method is proposed as [0, m]."""
        h = Harness(limits=LocalLimits())
        _, out = h.open()
        proposals = [v for op, v, _ in out if op == SET_CONNECTION_OPT]
        self.assertEqual(proposals, [[0, m] for m in (4, 5, 2, 1, 3)])

    def test_preferred_sent_after_proposals(self):
        """A local preference goes out as [1, m] after the [0, m] offers."""
        h = Harness(limits=LocalLimits(compression=(4, 2),
                                       preferred_compression=2))
        _, out = h.open()
        options = [v for op, v, _ in out if op == SET_CONNECTION_OPT]
        self.assertEqual(options, [[0, 4], [0, 2], [1, 2]])

    def test_peer_preference_used_for_large_batches(self):
        """After the peer's [1, 2] (gzip agreed), our large batches go out
        in gzip, not in the first method of our local order."""
        h = Harness(limits=LocalLimits(compression=(4, 2)))
        h.open()
        h.feed(h.peer.msg(SET_CONNECTION_OPT, [0, 2], to=h.der),
               h.peer.msg(SET_CONNECTION_OPT, [1, 2], to=h.der),
               h.peer.msg(ACK, [3, 0, 4]), h.peer.msg(ACK, [3, 0, 2]))
        for _ in range(3):
            h.conn.send(SHOUT, "x" * 100)
        h.clock.advance(0)
        self.assertEqual(h.transport.value()[1], 2)

    def test_ack_and_nack_of_peer_proposals(self):
        """ACK [3, 0, m] for a method we run, NACK "unsupported" for 6."""
        h = Harness(limits=LocalLimits(compression=(4,)))
        h.open()
        out = h.feed(h.peer.msg(SET_CONNECTION_OPT, [0, 4], to=h.der),
                     h.peer.msg(SET_CONNECTION_OPT, [0, 6], to=h.der))
        self.assertEqual([o[:2] for o in out],
                         [(ACK, [3, 0, 4]), (NACK, [3, 0, 6, "unsupported"])])

    def test_preferred(self):
        """[1, m] is ACKed when m is agreed or 0, else NACKed."""
        h = Harness(limits=LocalLimits(compression=(4,)))
        h.open()
        out = h.feed(h.peer.msg(SET_CONNECTION_OPT, [1, 2], to=h.der),
                     h.peer.msg(SET_CONNECTION_OPT, [0, 4], to=h.der),
                     h.peer.msg(SET_CONNECTION_OPT, [1, 4], to=h.der),
                     h.peer.msg(SET_CONNECTION_OPT, [1, 0], to=h.der))
        self.assertEqual([o[1][-1] if o[0] == NACK else o[1] for o in out],
                         ["unsupported", [3, 0, 4], [3, 1, 4], [3, 1, 0]])

    def test_compressed_transmission_after_agreement(self):
        """After ACKing zlib, a zlib transmission is read; large batches we
        send are compressed once the peer ACKed ours."""
        h = Harness(limits=LocalLimits(compression=(4,)))
        _, out = h.open()
        h.owner.answer = (ACK, [PING])
        h.feed(h.peer.msg(ACK, [3, 0, 4]))
        out = h.feed(*[h.peer.msg(PING, None, to=h.der)] * 3, method=4)
        self.assertEqual(out, [(ACK, [PING], h.peer.der)] * 3)
        for _ in range(3):
            h.conn.send(SHOUT, "x" * 100)
        h.clock.advance(0)
        self.assertEqual(h.transport.value()[1], 4)

    def test_unagreed_method_nack_and_close(self):
        """A transmission in a method never agreed: NACK [3, 0, m,
        "not-agreed"], flush, close (P2P-D3.6)."""
        h = Harness()
        h.open()
        out = h.feed(h.peer.msg(PING, None, to=h.der), method=1)
        self.assertEqual(out[0][:2], (NACK, [3, 0, 1, "not-agreed"]))
        self.assertTrue(h.transport.disconnecting)

    def test_small_bodies_not_compressed(self):
        """A body up to 1 KiB goes uncompressed even when agreed."""
        h = Harness(limits=LocalLimits(compression=(4,)))
        h.open()
        h.feed(h.peer.msg(ACK, [3, 0, 4]))
        h.conn.send(ANNOUNCE, [None, None])
        h.clock.advance(0)
        self.assertEqual(h.transport.value()[1], 0)
