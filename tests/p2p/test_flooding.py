"""Flooding on the in-memory network (P2P-D8.3): the seed's exact message
counts m = t − n + 1, (2ℓ−1)n + 1 and (n−1)², the lag bound, and
join-grown networks."""

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import SubnetConfig
from p2pmesh._config import ANNOUNCE, SHOUT

from ._fixtures import pooled_keys
from ._network import Network


def build(n, edges, ell, seed=0):
    """A network whose links are exactly `edges` (i dials j)."""
    net = Network(n, config=SubnetConfig(ell=ell), seed=seed)
    net.start_all()
    for i, j in edges:
        net.connect(i, j)
    net.settle()
    return net


def shout_and_count(test, net, origin):
    """Shout from `origin`; returns (m, hops per node); asserts every
    other node delivered it exactly once."""
    got = {}
    start = net.rounds
    for i, node in enumerate(net.nodes):
        node.on(SHOUT, lambda sender, value, i=i:
                got.setdefault(i, []).append(net.rounds - start + 1))
    net.reset_counts()
    net.nodes[origin].shout(["flood", origin])
    net.settle()
    test.assertEqual(sorted(got), [i for i in range(len(net.nodes))
                                   if i != origin])
    for i, arrivals in got.items():
        test.assertEqual(len(arrivals), 1, "node %d delivered twice" % i)
    return net.sent(SHOUT), {i: a[0] for i, a in got.items()}


def bfs(n, edges, origin):
    adjacent = {i: set() for i in range(n)}
    for i, j in edges:
        adjacent[i].add(j)
        adjacent[j].add(i)
    dist = {origin: 0}
    frontier = [origin]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adjacent[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def circulant(n, ell):
    """i → i+1 .. i+ℓ (mod n): the band graph completed at the end, exactly
    ℓ outbound per node, no pair twice when n ≥ 2ℓ+1."""
    return [(i, (i + d) % n) for i in range(n) for d in range(1, ell + 1)]


def random_outbound(n, ell, rng):
    """Exactly ℓ outbound per node, random targets, connected."""
    while True:
        pairs = set()
        edges = []
        ok = True
        for i in range(n):
            choices = [j for j in range(n) if j != i
                       and (i, j) not in pairs and (j, i) not in pairs]
            if len(choices) < ell:
                ok = False
                break
            for j in rng.sample(choices, ell):
                pairs.add((i, j))
                edges.append((i, j))
        if ok and len(bfs(n, edges, 0)) == n:
            return edges


def complete(n):
    """Every pair once; at most ⌈(n−1)/2⌉ outbound per node."""
    edges = []
    for i in range(n):
        for j in range(i + 1, n):
            d = j - i
            edges.append((i, j) if d <= n - d else (j, i))
    return edges


class Counts(SynchronousTestCase):

    def setUp(self):
        pooled_keys(64)

    @settings(max_examples=6, deadline=None)
    @given(st.integers(2, 24), st.data())
    def test_any_connected_graph(self, n, data):
        """Any connected graph: every node delivers once, m = t − n + 1."""
        seed = data.draw(st.integers(0, 2 ** 32))
        rng = random.Random(seed)
        order = list(range(n))
        rng.shuffle(order)
        edges = [(order[i], order[rng.randrange(i)]) for i in range(1, n)]
        present = {frozenset(e) for e in edges}
        for _ in range(data.draw(st.integers(0, n * 2))):
            i, j = rng.sample(range(n), 2)
            if frozenset((i, j)) not in present:
                present.add(frozenset((i, j)))
                edges.append((i, j))
        net = build(n, edges, ell=24, seed=seed)
        origin = data.draw(st.integers(0, n - 1))
        t = net.connections_total()
        self.assertEqual(t, 2 * len(edges))
        m, hops = shout_and_count(self, net, origin)
        self.assertEqual(m, t - n + 1)
        # synchronous rounds: the first arrival is the BFS distance
        self.assertEqual(hops, {i: d for i, d in bfs(n, edges, origin).items()
                                if i != origin})

    def test_limited_band_graphs(self):
        """Exactly ℓ outbound each (completed band graphs), n > 2ℓ+1:
        m = (2ℓ−1)n + 1."""
        for ell, n in ((1, 4), (1, 11), (2, 6), (2, 23), (3, 8), (3, 20),
                       (4, 10), (4, 33), (2, 64)):
            net = build(n, circulant(n, ell), ell)
            self.assertEqual(net.connections_total(), 2 * ell * n)
            m, _ = shout_and_count(self, net, n // 2)
            self.assertEqual(m, (2 * ell - 1) * n + 1, (ell, n))

    def test_limited_random_graphs(self):
        """Random ℓ-outbound graphs: m = (2ℓ−1)n + 1 whatever the origin."""
        rng = random.Random(2)
        for ell, n in ((1, 9), (2, 16), (3, 24), (4, 30)):
            net = build(n, random_outbound(n, ell, rng), ell)
            m, _ = shout_and_count(self, net, rng.randrange(n))
            self.assertEqual(m, (2 * ell - 1) * n + 1, (ell, n))

    def test_saturated(self):
        """Complete networks with n ≤ 2ℓ+1: m = (n−1)², and at the
        crossover n = 2ℓ+1 both formulas hold."""
        for ell, n in ((1, 3), (2, 4), (2, 5), (3, 7), (4, 9), (4, 6)):
            net = build(n, complete(n), ell)
            m, _ = shout_and_count(self, net, 0)
            self.assertEqual(m, (n - 1) ** 2, (ell, n))
            if n == 2 * ell + 1:
                self.assertEqual(m, (2 * ell - 1) * n + 1)


def lag_bound(n, ell):
    return math.ceil(max((n - 2) / ell, 1))


def triangle_with_tail(n):
    """ℓ = 1 worst case: 0→1→2→0, then i → i−1 for i ≥ 3."""
    return [(0, 1), (1, 2), (2, 0)] + [(i, i - 1) for i in range(3, n)]


def band_worst_end(n):
    """ℓ = 2 worst case for even n: i → i−1, i−2 for i ≥ 2, the first two
    nodes completed with 1→0, 0→3, 0→4, 1→4; the origin at the far end."""
    edges = [(i, i - d) for i in range(2, n) for d in (1, 2)]
    return edges + [(1, 0), (0, 3), (0, 4), (1, 4)]


class Lag(SynchronousTestCase):

    def setUp(self):
        pooled_keys(24)

    def test_triangle_with_tail_is_worst_for_ell_1(self):
        """ℓ = 1, origin at the tail's end: lag = n − 2 exactly."""
        for n in (4, 7, 12):
            net = build(n, triangle_with_tail(n), 1)
            _, hops = shout_and_count(self, net, n - 1)
            self.assertEqual(max(hops.values()), n - 2)
            self.assertEqual(max(hops.values()), lag_bound(n, 1))

    def test_band_worst_end_for_ell_2(self):
        """ℓ = 2, even n, origin at the far end: lag = (n − 2)/2 exactly."""
        for n in (6, 10, 16):
            edges = band_worst_end(n)
            outbound = [sum(1 for i, _ in edges if i == v) for v in range(n)]
            self.assertEqual(outbound, [2] * n)
            net = build(n, edges, 2)
            _, hops = shout_and_count(self, net, n - 1)
            self.assertEqual(max(hops.values()), lag_bound(n, 2))

    def test_random_topologies_within_bound(self):
        """Random ℓ-outbound graphs, n > 2ℓ+1, every origin: lag ≤ bound."""
        rng = random.Random(5)
        for ell, n in ((1, 8), (2, 12), (3, 17)):
            edges = random_outbound(n, ell, rng)
            net = build(n, edges, ell)
            for origin in rng.sample(range(n), 3):
                _, hops = shout_and_count(self, net, origin)
                self.assertLessEqual(max(hops.values()), lag_bound(n, ell))


class JoinGrown(SynchronousTestCase):

    def test_join_grown_network(self):
        """n = 32, ℓ = 3, each node joining through an earlier one: once
        transient links closed, ≤ ℓ outbound each, every ANNOUNCE reached
        every node, m = t − n + 1 ≤ (2ℓ−1)n + 1."""
        n, ell = 32, 3
        pooled_keys(n)
        rng = random.Random(3)
        net = Network(0, config=SubnetConfig(ell=ell), seed=3)
        announces = {}
        for i in range(n):
            boot = [net.address_of(rng.randrange(i))] if i else []
            node = net.add_node(bootstrap=boot)
            node.on(ANNOUNCE, lambda sender, value, i=i:
                    announces.setdefault(sender, set()).add(i))
            node.start()
            net.settle()
        # each node's ANNOUNCE reached every node that was there before it
        for j, node in enumerate(net.nodes[1:], start=1):
            self.assertEqual(announces.get(node.key, set()),
                             set(range(j)) - {j})
        net.advance(31)
        for node in net.nodes:
            self.assertLessEqual(len(node.links.persistent_outbound()), ell)
            self.assertFalse([c for c in node.links.open.values()
                              if c.transient])
        t = net.connections_total()
        m, _ = shout_and_count(self, net, 0)
        self.assertEqual(m, t - n + 1)
        self.assertLessEqual(m, (2 * ell - 1) * n + 1)
