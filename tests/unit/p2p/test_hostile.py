"""Hostile peers (P2P-D5.3; docs/p2pmesh.md, "Limits (what a hostile peer meets)"): each
attack gets the
refusal the decisions name (close, or NACK with a reason), and the
victim's other link keeps working."""

import zlib

from twisted.internet.protocol import Protocol
from twisted.test import iosim
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import LocalLimits, SubnetConfig, _framing, _keys, _message, _payload
from p2pmesh._config import ACK, FIND_VALUE, NACK, PING, SET_CONNECTION_OPT, SHOUT, STORE

from ...p2p._network import Network
from ._peer import Peer


class Hostile(Protocol):
    """A raw peer with test key C: writes whatever bytes the test wants."""

    def __init__(self):
        self.peer = Peer("C")
        self.inbox = []
        self.lost = False

    def dataReceived(self, data):
        for method, body in self.peer.decoder.feed(data):
            body = zlib.decompress(body) if method == 4 else body
            for m in _message.split_messages(body, 2048):
                self.inbox.append((m.opcode, _payload.unpack(m.payload)))

    def connectionLost(self, reason):
        self.lost = True

    def send(self, *messages, method=0):
        self.transport.write(self.peer.tx(*messages, method=method))

    def msg(self, opcode, value, **kw):
        return self.peer.msg(opcode, value, **kw)


class HostileCase(SynchronousTestCase):

    limits = LocalLimits(compression=())

    def setUp(self):
        self.net = Network(2, limits=self.limits)
        self.net.start_all()
        self.victim, self.good = self.net.nodes
        self.net.connect(1, 0)
        self.net.settle()
        self.hostile = self.attach()

    def attach(self):
        """Connect a Hostile to the victim and complete the handshake."""
        server = self.net.listeners[self.net.address_of(0)].buildProtocol(
            None)
        hostile = Hostile()
        pump = iosim.connect(server, iosim.FakeTransport(server, True),
                             hostile, iosim.FakeTransport(hostile, False),
                             greet=False, clock=self.net.clock)
        self.net.pumps.append(pump)
        subnet = SubnetConfig().as_setting()
        hostile.send(hostile.msg(SET_CONNECTION_OPT, [2, subnet]))
        self.net.settle()
        hostile.send(hostile.msg(ACK, [SET_CONNECTION_OPT, 2, subnet],
                                 to=self.victim.key))
        self.net.settle()
        self.assertIn(hostile.peer.der, self.victim.links.open)
        hostile.inbox.clear()
        return hostile

    def to_victim(self, opcode, value, **kw):
        return self.hostile.msg(opcode, value, to=self.victim.key, **kw)

    def assert_still_serving(self):
        """The good peer's SHOUT reaches the victim, the victim's PING to
        the good peer is ACKed."""
        got = []
        self.victim.on(SHOUT, lambda s, v: got.append(v))
        self.good.shout("still here")
        link = self.victim.links.open[self.good.key]
        d = link.request(PING, None)
        self.net.settle()
        self.assertEqual(got, ["still here"])
        self.assertEqual(self.successResultOf(d), [PING])

    def assert_closed(self):
        self.net.settle()
        self.assertTrue(self.hostile.lost)
        self.assertNotIn(self.hostile.peer.der, self.victim.links.open)
        self.assert_still_serving()

    def assert_answer(self, expected):
        self.net.settle()
        self.assertEqual(self.hostile.inbox, expected)
        self.assertFalse(self.hostile.lost)
        self.assert_still_serving()


class Framing(HostileCase):

    def test_reserved_transmission_bits(self):
        """Reserved bits in the transmission header: close."""
        self.hostile.transport.write(b"\x01\x00\x00\x00\x00\x01x")
        self.assert_closed()

    def test_oversize_length(self):
        """A length over 16 MiB is refused on sight, nothing buffered."""
        self.hostile.transport.write(b"\x00\x00\xff\xff\xff\xff")
        self.assert_closed()

    def test_partial_message(self):
        """A body that is not whole messages: close."""
        raw = self.to_victim(PING, None)
        self.hostile.transport.write(_framing.encode_transmission(0, raw[:-1]))
        self.assert_closed()

    def test_unagreed_compression(self):
        """bz2 never agreed (no offers here): NACK "not-agreed", close."""
        self.hostile.send(self.to_victim(PING, None), method=1)
        self.net.settle()
        self.assertEqual(self.hostile.inbox,
                         [(NACK, [SET_CONNECTION_OPT, 0, 1, "not-agreed"])])
        self.assert_closed()


class Bomb(HostileCase):

    limits = LocalLimits()   # the victim offers zlib & co.

    def test_compression_bomb(self):
        """17 MiB of zeros in a zlib body of a few KiB: close."""
        bomb = zlib.compress(b"\0" * (17 << 20), 9)
        self.assertLess(len(bomb), 40000)
        self.hostile.transport.write(_framing.encode_transmission(4, bomb))
        self.assert_closed()


class Signatures(HostileCase):

    def test_bad_signature(self):
        """One flipped payload bit: the signature fails, close."""
        raw = bytearray(self.to_victim(SHOUT, "x"))
        raw[-1] ^= 1
        self.hostile.send(bytes(raw))
        self.assert_closed()

    def test_non_canonical_from_key(self):
        """A From key with its modulus top bit clear: close."""
        raw = bytearray(self.to_victim(PING, None))
        raw[256 + 6 + 33] &= 0x7F
        self.hostile.send(bytes(raw))
        self.assert_closed()

    def test_forged_from(self):
        """A message claiming From = the good peer, signed by C: close."""
        unsigned = bytearray(self.to_victim(SHOUT, "x")[256:])
        unsigned[6:6 + 294] = self.good.key
        raw = _keys.sign(self.hostile.peer.private, bytes(unsigned)) + \
            bytes(unsigned)
        self.hostile.send(raw)
        self.assert_closed()


class Refusals(HostileCase):

    def test_wrong_address(self):
        """FIND_VALUE whose address is not hash(key): NACK "malformed"."""
        self.hostile.send(self.to_victim(FIND_VALUE, [b"\0" * 32, b"key"]))
        self.assert_answer([(NACK, [FIND_VALUE, "malformed"])])

    def test_unknown_opcode(self):
        """Opcode 13: NACK "unsupported"."""
        self.hostile.send(self.to_victim(13, None))
        self.assert_answer([(NACK, [13, "unsupported"])])

    def test_msgpack_depth_bomb(self):
        """A PING payload nested 10 000 deep: NACK "malformed"."""
        payload = b"\x91" * 10000 + b"\xc0"
        self.hostile.send(self.to_victim(PING, None, payload=payload))
        self.assert_answer([(NACK, [PING, "malformed"])])

    def test_foreign_to(self):
        """A PING addressed to the good peer: NACK "not-recipient"."""
        self.hostile.send(self.hostile.msg(PING, None, to=self.good.key))
        self.assert_answer([(NACK, [PING, "not-recipient"])])

    def test_store_too_large(self):
        """A STORE value over 64 KiB packed: NACK [11, key, "too-large"]."""
        key = b"big"
        address = _keys.value_address(key, 256).to_bytes(32, "big")
        self.hostile.send(self.to_victim(STORE, [address, key,
                                                 b"x" * 70000]))
        self.assert_answer([(NACK, [STORE, key, "too-large"])])
        self.assertIsNone(self.victim.dht.store.get(key))

    def test_replayed_broadcast(self):
        """The same SHOUT twice: delivered and forwarded once."""
        got = []
        self.good.on(SHOUT, lambda s, v: got.append(v))
        raw = self.hostile.msg(SHOUT, "replay")
        self.hostile.send(raw)
        self.net.settle()
        self.hostile.send(raw)
        self.hostile.send(raw, raw)
        self.net.settle()
        self.assertEqual(got, ["replay"])
        self.assertEqual(self.victim.links.sent_messages.get(SHOUT), 1)
        self.assert_still_serving()

    def test_encrypted_broadcast_dropped(self):
        """A SHOUT with the encrypted bit: dropped, never relayed."""
        got = []
        self.good.on(SHOUT, lambda s, v: got.append(v))
        self.hostile.send(self.hostile.msg(SHOUT, "x", encrypted=True))
        self.net.settle()
        self.assertEqual(got, [])
        self.assert_still_serving()


class Silence(HostileCase):

    def test_peer_that_never_answers(self):
        """The victim's PING to a silent peer times out after 5 s: the link
        closes and the failure is counted; the other link works."""
        link = self.victim.links.open[self.hostile.peer.der]
        d = link.request(PING, None)
        self.net.settle()
        self.net.advance(5)
        self.failureResultOf(d)
        self.assert_closed()


class Queues(HostileCase):

    limits = LocalLimits(compression=(), max_queued_bytes=200000,
                         max_pending_answers=5)

    def test_peer_that_does_not_read(self):
        """When the transport pauses us (the peer stopped reading) bytes
        queue up to max_queued_bytes, then the link closes."""
        link = self.victim.links.open[self.hostile.peer.der]
        link.pauseProducing()   # what the transport does when it is full
        for i in range(30):
            self.victim.shout(["big", i, "x" * 10000])
            self.net.clock.advance(0)
        self.assert_closed()

    def test_request_flood_with_unanswered_handler(self):
        """Requests piling up behind an unanswered CUSTOM: past
        max_pending_answers the link closes."""
        from twisted.internet import defer
        self.victim.register_custom(lambda sender, value: defer.Deferred())
        self.hostile.send(*[self.to_victim(15, i) for i in range(6)])
        self.assert_closed()
