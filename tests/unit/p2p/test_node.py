"""The public Node surface (P2P-D7 "Public surface"): lifecycle, SPEAK,
CUSTOM, ANNOUNCE handling."""

from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import LocalLimits, SubnetConfig
from p2pmesh._config import ANNOUNCE, SPEAK
from p2pmesh._requests import RequestFailed

from ...p2p._network import Network, run


def line(n, limits=None):
    net = Network(n, config=SubnetConfig(ell=2),
                  limits=limits or LocalLimits(compression=()))
    net.start_all()
    for i in range(n - 1):
        net.connect(i, i + 1)
    net.settle()
    return net


class Lifecycle(SynchronousTestCase):

    def test_start_stop_idempotent(self):
        """A second start or stop is harmless; stop closes every link and
        leaves no timer behind."""
        net = line(3)
        node = net.nodes[1]
        self.successResultOf(node.start())
        node.stop()
        node.stop()
        net.settle()
        self.assertEqual(node.links.connections, set())
        self.assertEqual(net.nodes[0].links.open, {})
        for other in (net.nodes[0], net.nodes[2]):
            other.stop()
        net.settle()
        self.assertEqual(net.clock.getDelayedCalls(), [])

    def test_no_start_after_stop(self):
        """start() after stop() fails with NodeStopped (a Node is not
        restartable), where it raised Automat's NoTransition; found by the
        audit of refused inputs (docs/state-machines/refusals.md)."""
        from p2pmesh._node import NodeStopped
        net = line(2)
        node = net.nodes[0]
        node.stop()
        net.settle()
        self.failureResultOf(node.start(), NodeStopped)
        net.nodes[1].stop()
        net.settle()

    def test_key_size_must_match_beta(self):
        """A 2048-bit key in a β = 3072 subnet is refused at construction."""
        from p2pmesh import Node

        from ...p2p._fixtures import pooled_keys
        self.assertRaises(ValueError, Node, SubnetConfig(beta=3072),
                          pooled_keys(1)[0], None, None)


class BadArguments(SynchronousTestCase):

    def test_failures_are_deferred(self):
        """Bad arguments fail the returned Deferred, never raise: a key
        that is no canonical key, an oversize value, a payload msgpack
        cannot carry."""
        from p2pmesh import _keys, _payload
        net = line(2)
        node = net.nodes[0]
        self.failureResultOf(node.whisper(b"not a key", "x"),
                             _keys.NonCanonicalKey)
        self.failureResultOf(node.set(b"k", b"x" * 70000), ValueError)
        self.failureResultOf(node.set(b"k" * 300, 1), ValueError)
        self.failureResultOf(node.shout({1: "int key"}), _payload.Malformed)


class Speak(SynchronousTestCase):

    def test_speak_reaches_direct_peers_only(self):
        """0—1—2: node 1 speaks, 0 and 2 hear; node 0 speaks, 2 does not."""
        net = line(3)
        heard = {i: [] for i in range(3)}
        for i, node in enumerate(net.nodes):
            node.on(SPEAK, lambda s, v, i=i: heard[i].append(v))
        net.nodes[1].speak("to neighbours")
        net.nodes[0].speak("from the end")
        net.settle()
        self.assertEqual(heard, {0: ["to neighbours"],
                                 1: ["from the end"],
                                 2: ["to neighbours"]})

    def test_speak_forwarded_when_policy_opts_in(self):
        """forward_speak=True floods SPEAK like SHOUT (P2P-D5.5)."""
        net = line(3, LocalLimits(compression=(), forward_speak=True))
        heard = []
        net.nodes[2].on(SPEAK, lambda s, v: heard.append(v))
        net.nodes[0].speak("far")
        net.settle()
        self.assertEqual(heard, ["far"])


class Custom(SynchronousTestCase):

    def test_custom_answered_by_handler(self):
        """CUSTOM reaches the registered handler; its result is ACK
        [15, *result]; an exception is NACK [15, reason]."""
        net = line(2)
        a, b = net.nodes

        def handler(sender, value):
            if value == "boom":
                raise ValueError("no boom here")
            return [sender == a.key, value]
        b.register_custom(handler)
        self.assertEqual(run(net, a.custom(b.key, "ping")), [True, "ping"])
        failure = self.assertRaises(RequestFailed, run, net,
                                    a.custom(b.key, "boom"))
        self.assertEqual(failure.args[0], [15, "no boom here"])

    def test_custom_without_handler_unsupported(self):
        """No handler: NACK [15, "unsupported"]."""
        net = line(2)
        a, b = net.nodes
        failure = self.assertRaises(RequestFailed, run, net,
                                    a.custom(b.key, 1))
        self.assertEqual(failure.args[0], [15, "unsupported"])


class Announce(SynchronousTestCase):

    def test_directed_announce_gives_listening_address(self):
        """After the handshake each side knows the other's host and port
        from the directed ANNOUNCE (P2P-D6.2), without a delivery."""
        net = line(2)
        a, b = net.nodes
        heard = []
        b.on(ANNOUNCE, lambda s, v: heard.append(v))
        contact = b.table.get(a.address)
        self.assertEqual((contact.host, contact.port), net.address_of(0))
        self.assertEqual(heard, [])

    def test_join_floods_announce_and_fills_slots(self):
        """A joining node's flooded ANNOUNCE reaches nodes it is not linked
        to, and lookups let it fill its ℓ outbound slots (or link to every
        node it knows)."""
        net = Network(0, config=SubnetConfig(ell=2))
        first = net.add_node()
        first.start()
        for _i in range(1, 5):
            net.add_node(bootstrap=[net.address_of(0)]).start()
            net.settle()
        heard = []
        net.nodes[1].on(ANNOUNCE, lambda s, v: heard.append(v))
        late = net.add_node(bootstrap=[net.address_of(2)])
        late.start()
        net.settle()
        self.assertIn(list(net.address_of(5)), heard)
        net.advance(31)
        # ℓ slots filled, unless every known node is already linked (an
        # inbound link or a duplicate the other side dialed first)
        outbound = len(late.links.persistent_outbound())
        unlinked = [c for c in late.table.contacts()
                    if c.der not in late.links.open]
        self.assertTrue(outbound == 2 or (outbound and not unlinked),
                        (outbound, len(unlinked)))


class Unspecified(SynchronousTestCase):

    def test_every_interface_listener_learned_from_its_connection(self):
        """A node listening on 0.0.0.0 announces only its port; the peer
        it dials takes the address the link comes from, and passes it on
        in FIND_NODE answers."""
        net = Network(0)
        net.add_node().start()
        roaming = net.add_node(advertise=False, bind=("0.0.0.0", 4000),
                               bootstrap=[net.address_of(0)])
        roaming.start()
        net.settle()
        self.assertEqual(roaming.advertised(), [None, 4000])
        first = net.nodes[0]
        contact = first.table.get(roaming.address)
        self.assertEqual((contact.host, contact.port), net.address_of(1))
        third = net.add_node(bootstrap=[net.address_of(0)])
        third.start()
        net.settle()
        learned = third.table.get(roaming.address)
        self.assertEqual((learned.host, learned.port), net.address_of(1))
