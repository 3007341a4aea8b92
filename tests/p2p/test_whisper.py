"""WHISPER on the in-memory network (P2P-D6.10, P2P-D8.3): iterative and
recursive delivery, answers routed back, relays never see plaintext."""

import random

from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import SubnetConfig, _keys, _message, _payload
from p2pmesh._config import NACK, WHISPER
from p2pmesh._whisper import WhisperFailed

from ._fixtures import pooled_keys
from ._network import grow, run


def received(node):
    got = []
    node.on(WHISPER, lambda sender, value: got.append((sender, value)))
    return got


class Iterative(SynchronousTestCase):

    def test_iterative_whisper_acked(self):
        """k = 20, n = 16: a target that is not a direct peer is found by
        FIND_NODE, dialed transiently and ACKs; nobody relays."""
        net = grow(16, 11, SubnetConfig(k=20, ell=2))
        net.advance(31)   # the join's transient links close
        origin = net.nodes[-1]
        target = next(n for n in net.nodes
                      if n is not origin and n.key not in origin.links.open)
        got = received(target)
        self.assertIsNone(run(net, origin.whisper(target.key, {"m": "hi"})))
        self.assertEqual(got, [(origin.key, {"m": "hi"})])
        self.assertEqual(sum(n.whispers.relayed_count for n in net.nodes), 0)

    def test_direct_unencrypted_allowed(self):
        """encrypt=False is allowed for direct delivery (P2P-D4.3)."""
        net = grow(3, 12, SubnetConfig(k=20, ell=2))
        a = net.nodes[1]
        b = net.nodes[0]
        self.assertIn(b.key, a.links.open)
        got = received(b)
        run(net, a.whisper(b.key, "plain", encrypt=False))
        self.assertEqual(got, [(a.key, "plain")])

    def test_unencrypted_not_direct_refused_locally(self):
        """encrypt=False to a non-peer fails "encryption-required"."""
        net = grow(6, 13, SubnetConfig(k=20, ell=1))
        net.advance(31)
        a = min(net.nodes, key=lambda n: len(n.links.open))
        target = next(n for n in net.nodes if n is not a
                      and n.key not in a.links.open)
        f = self.assertRaises(WhisperFailed, run, net,
                              a.whisper(target.key, "x", encrypt=False))
        self.assertEqual(f.reason, "encryption-required")

    def test_unknown_target_unreachable(self):
        """A key no node has: NACK "unreachable" after the lookup."""
        net = grow(6, 14, SubnetConfig(k=20, ell=2))
        stranger = _keys.public_der(pooled_keys(7)[6])
        f = self.assertRaises(WhisperFailed, run, net,
                              net.nodes[0].whisper(stranger, "x"))
        self.assertEqual(f.reason, "unreachable")

    def test_relay_refuses_unencrypted(self):
        """An unencrypted WHISPER for someone else gets NACK [8, signature,
        "encryption-required"] from the relay (P2P-D4.3)."""
        net = grow(4, 15, SubnetConfig(k=20, ell=1))
        net.advance(31)
        origin = net.nodes[3]
        relay_key, link = next(iter(origin.links.open.items()))
        target = next(n for n in net.nodes
                      if n.key not in (origin.key, relay_key))
        raw = _message.encode_message(
            origin.identity.private_key, origin.key, target.key, WHISPER,
            _payload.pack("in clear"))
        answers = []
        self.patch(origin.whispers, "answer_arrived",
                   lambda conn, message, value: answers.append(
                       (message.opcode, value)))
        link.send_raw(raw, WHISPER)
        net.settle()
        self.assertEqual(answers, [(NACK, [WHISPER, raw[:256],
                                           "encryption-required"])])


class Recursive(SynchronousTestCase):

    def test_recursive_whisper_acked_relays_see_ciphertext(self):
        """k = 2, n = 32: the target's bucket is full at the origin and a
        strictly closer link exists, so the bytes go hop by hop; the ACK
        comes back the same way and relays deliver nothing."""
        net = grow(32, 21, SubnetConfig(k=2, alpha=2, ell=3))
        net.advance(31)
        rng = random.Random(1)
        pairs = [(o, t) for o in net.nodes for t in net.nodes
                 if o is not t and t.key not in o.links.open
                 and o.table.is_full(t.address)
                 and o.whispers._closer_links(t.address, None)]
        self.assertTrue(pairs)
        deliveries = []
        for i, node in enumerate(net.nodes):
            node.on(WHISPER, lambda s, v, i=i: deliveries.append(i))
        targets = set()
        for origin, target in rng.sample(pairs, min(3, len(pairs))):
            before = sum(n.whispers.relayed_count for n in net.nodes)
            got = received(target)
            self.assertIsNone(run(net, origin.whisper(target.key, [1, "r"])))
            self.assertEqual(got, [(origin.key, [1, "r"])])
            self.assertGreater(
                sum(n.whispers.relayed_count for n in net.nodes), before)
            targets.add(net.nodes.index(target))
        # relays forwarded the encrypted bytes: only targets decrypted
        self.assertTrue(set(deliveries) <= targets, (deliveries, targets))
