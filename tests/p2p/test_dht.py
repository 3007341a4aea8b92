"""The DHT on the in-memory network (P2P-D8.3): 64 join-grown nodes,
k = 8, α = 3; lookups, set/get, churn, replication and expiry."""

import functools
import random

from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import SubnetConfig
from p2pmesh._config import STORE
from p2pmesh._keys import value_address

from ._network import grow, run

K = 8


def find_every_node(net, sources):
    """{(i, j): found} for node i looking up every other node j, i in
    `sources`; found = the lookup's nearest answer is j's key. The lookups
    of one source run concurrently, one settle per source."""
    found = {}
    for i in sources:
        node = net.nodes[i]
        for j, target in enumerate(net.nodes):
            if j != i:
                node.dht.find_node(target.address).addCallback(
                    lambda result, key=target.key, pair=(i, j):
                    found.__setitem__(pair, bool(result.closest)
                                      and result.closest[0].der == key))
        net.settle()
    return found


@functools.cache
def shared_network():
    """Built once per process: an in-memory network holds no sockets."""
    return grow(64, 1, SubnetConfig(k=K, alpha=3, ell=4))


class SixtyFourNodes(SynchronousTestCase):
    """One join-grown network shared by the tests of this class, which
    leave every node running (trial --jobs may run them in any order)."""

    def setUp(self):
        self.net = shared_network()

    def test_every_node_is_found_first_quarter(self):
        """Nodes 0-15 each look up all 63 others: every lookup's nearest
        answer is its target (the all-pairs check of P2P-D8.3 is split in
        quarters so trial --jobs can spread it)."""
        self.assertAllFound(range(0, 16))

    def test_every_node_is_found_second_quarter(self):
        """Nodes 16-31 each look up all 63 others and find each one."""
        self.assertAllFound(range(16, 32))

    def test_every_node_is_found_third_quarter(self):
        """Nodes 32-47 each look up all 63 others and find each one."""
        self.assertAllFound(range(32, 48))

    def test_every_node_is_found_fourth_quarter(self):
        """Nodes 48-63 each look up all 63 others and find each one."""
        self.assertAllFound(range(48, 64))

    def assertAllFound(self, sources):
        pairs = find_every_node(self.net, sources)
        self.assertEqual(len(pairs), len(sources) * (len(self.net.nodes) - 1))
        self.assertEqual([p for p, found in pairs.items() if not found], [])

    def test_lookups_return_true_k_closest(self):
        """For random addresses, the result is the k closest of all nodes
        (computed globally, the querier excluded)."""
        rng = random.Random(9)
        for _ in range(24):
            node = rng.choice(self.net.nodes)
            target = rng.getrandbits(256)
            truth = sorted((n for n in self.net.nodes if n is not node),
                           key=lambda n: n.address ^ target)[:K]
            result = run(self.net, node.dht.find_node(target))
            self.assertEqual([c.der for c in result.closest],
                             [n.key for n in truth])

    def test_set_then_get_everywhere(self):
        """set on one node, then get from every node; the k closest hold
        the value."""
        nodes = self.net.nodes
        acks = run(self.net, nodes[5].set(b"dht-key", {"v": [1, 2, 3]}))
        self.assertGreaterEqual(acks, K - 1)
        for node in nodes:
            self.assertEqual(run(self.net, node.get(b"dht-key")),
                             {"v": [1, 2, 3]})
        address = value_address(b"dht-key", 256)
        closest = sorted(nodes, key=lambda n: n.address ^ address)[:K]
        for node in closest:
            self.assertIsNotNone(node.dht.store.get(b"dht-key"))

    def test_get_missing_is_none(self):
        """A key nobody holds: get fires None after the lookup."""
        self.assertIsNone(run(self.net, self.net.nodes[3].get(b"nobody")))


class Churn(SynchronousTestCase):

    def test_quarter_stopped_then_replication(self):
        """64 nodes, 25 % stopped: every live node still finds values and
        nodes; advance(3600) brings replication STOREs."""
        net = grow(64, 2, SubnetConfig(k=K, alpha=3, ell=4))
        run(net, net.nodes[9].set(b"churn-key", "survives"))
        rng = random.Random(4)
        stopped = set(rng.sample(range(1, 64), 16))
        for i in stopped:
            net.nodes[i].stop()
        net.settle()
        live = [n for i, n in enumerate(net.nodes) if i not in stopped]
        for node in live:
            self.assertEqual(run(net, node.get(b"churn-key")), "survives")
        for node in live[:16]:
            target = rng.choice(live)
            if target is node:
                continue
            result = run(net, node.dht.find_node(target.address))
            self.assertEqual(result.closest[0].der, target.key)
        net.reset_counts()
        net.advance(3600, step=600)
        self.assertGreater(net.sent(STORE), 0)
        for node in rng.sample(live, 8):
            self.assertEqual(run(net, node.get(b"churn-key")), "survives")


class Expiry(SynchronousTestCase):

    def test_holder_without_store_drops_value(self):
        """A holder that receives no STORE for 90 000 s drops the value
        (P2P-D7.4), not at 86 400 s."""
        net = grow(2, 2, SubnetConfig(k=K, alpha=3, ell=2))
        a, b = net.nodes
        self.assertEqual(run(net, a.set(b"ephemeral", 1)), 1)
        self.assertIsNotNone(b.dht.store.get(b"ephemeral"))
        a.stop()
        net.settle()
        net.advance(86400, step=3600)
        self.assertIsNotNone(b.dht.store.get(b"ephemeral"))
        net.advance(3600, step=3600)
        self.assertIsNone(b.dht.store.get(b"ephemeral"))
        net.stop_all()

    def test_publisher_republishes(self):
        """The publisher re-runs set after 86 400 s: the holder's copy is
        refreshed and does not expire at 90 000 s."""
        net = grow(2, 3, SubnetConfig(k=K, alpha=3, ell=2))
        a, b = net.nodes
        run(net, a.set(b"kept", 2))
        net.advance(93600, step=3600)
        self.assertIsNotNone(b.dht.store.get(b"kept"))
        self.assertLessEqual(b.dht.store.metadata(b"kept", 90000)["age"], 7200)
        net.stop_all()


class Maintenance(SynchronousTestCase):

    def test_new_contact_welcomed_with_values(self):
        """A node alone sets a value; a newcomer it is now among the k
        closest for gets it STOREd (P2P-D7.3, bmuller's welcome_if_new)."""
        net = grow(1, 5, SubnetConfig(k=K, alpha=3, ell=2))
        first = net.nodes[0]
        self.assertEqual(run(net, first.set(b"welcome", "hi")), 0)
        late = net.add_node(bootstrap=[net.address_of(0)])
        late.start()
        net.settle()
        self.assertEqual(late.dht.store.get(b"welcome").value, "hi")
        self.assertEqual(late.dht.store.get(b"welcome").stored_by, first.key)

    def test_idle_buckets_refreshed_hourly(self):
        """After an hour without traffic each non-empty bucket gets a
        lookup of a random address in it (P2P-D7.4)."""
        net = grow(6, 6, SubnetConfig(k=K, alpha=3, ell=2))
        node = net.nodes[0]
        before = node.dht.stats["lookups"]
        buckets = {node.table.bucket_of(c.address)
                   for c in node.table.contacts()}
        net.advance(3600, step=600)
        self.assertGreaterEqual(node.dht.stats["lookups"] - before,
                                len(buckets))
