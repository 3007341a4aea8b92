"""Connection management on the in-memory network (P2P-D6.3-6.9):
duplicate links, CHANGE_KEY, eviction pings, the outbound bound."""

from twisted.internet import defer
from twisted.internet.error import ConnectionRefusedError
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import SubnetConfig, _keys, _message, _payload
from p2pmesh._config import ACK, CHANGE_KEY, NACK, SHOUT
from p2pmesh._contacts import Contact

from ...p2p._fixtures import pooled_keys
from ...p2p._network import Network, run


def pair(net=None):
    net = net or Network(2)
    net.start_all()
    return net


class DuplicateLinks(SynchronousTestCase):

    def test_simultaneous_dials_keep_one(self):
        """Both dial at once: each side keeps the link dialed by the
        smaller truncated address and closes the other, silently, once
        the requests already on it are answered."""
        net = pair()
        a, b = net.nodes
        da = net.connect(0, 1)
        db = net.connect(1, 0)
        net.settle()
        self.assertEqual(len(a.links.open), 1)
        # the other link is retired: closed once idle, without a message
        net.advance(31)
        self.assertEqual(len(a.links.connections), 1)
        self.assertEqual(len(b.links.connections), 1)
        kept_by_a = a.links.open[b.key]
        smaller_dialed = a.address < b.address
        self.assertEqual(kept_by_a.outbound, smaller_dialed)
        # the same TCP link on both sides: b dialed it iff a did not
        self.assertEqual(b.links.open[a.key].outbound, not smaller_dialed)
        self.successResultOf(da)
        self.successResultOf(db)

    def test_shout_after_duplicate_once(self):
        """After the duplicate is gone a SHOUT crosses once."""
        net = pair()
        net.connect(0, 1)
        net.connect(1, 0)
        net.settle()
        net.reset_counts()
        got = []
        net.nodes[1].on(SHOUT, lambda s, v: got.append(v))
        net.nodes[0].shout("once")
        net.settle()
        self.assertEqual(got, ["once"])
        self.assertEqual(net.sent(SHOUT), 1)


class ChangeKey(SynchronousTestCase):

    def line(self, n):
        net = Network(n, config=SubnetConfig(ell=2))
        net.start_all()
        for i in range(n - 1):
            net.connect(i, i + 1)
        net.settle()
        return net

    def test_change_key_acked_by_direct_peers_and_flooded(self):
        """0—1—2—3: node 1 re-keys; 0 and 2 ACK [5, new] (its direct
        peers), 3 learns it by the flood and does not ACK."""
        net = self.line(4)
        seen = {i: [] for i in range(4)}
        for i, node in enumerate(net.nodes):
            node.on(CHANGE_KEY, lambda s, v, i=i: seen[i].append(v))
        old = net.nodes[1].key
        new_key = pooled_keys(5)[4]
        new = _keys.public_der(new_key)
        net.reset_counts()
        acks = run(net, net.nodes[1].change_key(new_key))
        self.assertEqual(acks, 2)
        self.assertEqual(net.nodes[1].key, new)
        for i in (0, 2, 3):
            self.assertEqual(seen[i], [[old, new]])
        self.assertEqual(net.nodes[3].links.sent_messages.get(ACK, 0), 0)
        # the peers re-keyed their links: a SHOUT from the new key passes
        got = []
        net.nodes[3].on(SHOUT, lambda s, v: got.append(s))
        net.nodes[1].shout("after")
        net.settle()
        self.assertEqual(got, [new])
        self.assertIn(new, net.nodes[0].links.open)

    def test_change_key_without_proof_refused(self):
        """A proof by the wrong key: NACK [5, "malformed"], not relayed."""
        net = self.line(3)
        mid = net.nodes[1]
        current = mid.key
        impostor = pooled_keys(5)[4]
        new = _keys.public_der(impostor)
        wrong_proof = _keys.change_key_proof(mid.identity.private_key,
                                             current, new)
        raw = _message.encode_message(
            mid.identity.private_key, current, current, CHANGE_KEY,
            _payload.pack([current, new, wrong_proof]))
        seen = []
        net.nodes[2].on(CHANGE_KEY, lambda s, v: seen.append(v))
        link = mid.links.open[net.nodes[0].key]
        d = link.request_raw(CHANGE_KEY, raw)
        net.settle()
        failure = self.failureResultOf(d)
        self.assertEqual(failure.value.args[0], [CHANGE_KEY, "malformed"])
        self.assertEqual(seen, [])
        self.assertEqual(net.nodes[0].links.sent_messages.get(NACK), 1)


class EvictionPing(SynchronousTestCase):

    def setUp(self):
        pooled_keys(8)

    def full_bucket_node(self):
        """Node 0 with k = 1: every bucket holds one contact."""
        net = Network(4, config=SubnetConfig(k=1, alpha=1, ell=3))
        net.start_all()
        return net

    def test_answered_keeps_old_newcomer_cached(self):
        """Full bucket: the least recently seen answers the PING, stays;
        the newcomer goes to the Node Info Cache."""
        net = self.full_bucket_node()
        a = net.nodes[0]
        net.connect(0, 1)
        net.settle()
        old = a.table.get(net.nodes[1].address)
        index = a.table.bucket_of(old.address)
        newcomer = Contact(b"x" * 294, old.address ^ 1, "10.9.9.9", 1)
        self.assertEqual(a.table.bucket_of(newcomer.address), index)
        a.saw_peer(newcomer)
        net.settle()
        self.assertEqual(a.table.bucket(index), [old])
        self.assertIn(newcomer.address, a.links.cache)

    def test_timed_out_evicts(self):
        """The least recently seen does not answer: evicted, newcomer in."""
        net = self.full_bucket_node()
        a = net.nodes[0]
        silent = Contact(net.nodes[3].key, net.nodes[3].address,
                         "10.200.0.1", 9)   # nobody listens there
        a.table.offer(silent, 0)
        index = a.table.bucket_of(silent.address)
        newcomer = Contact(b"y" * 294, silent.address ^ 1, "10.9.9.8", 1)
        a.saw_peer(newcomer)
        net.settle()
        self.assertEqual(a.table.bucket(index), [newcomer])
        self.assertIn(silent.address, a.links.cache)


    def newcomer_announced_while_pinging(self, oldest_answers):
        """A full bucket; a newcomer first seen without an address (a new
        link) starts the PING; its ANNOUNCE's sighting, with the address,
        comes before the PING ends. (node, the newcomer with its address,
        the bucket's index)"""
        net = self.full_bucket_node()
        a = net.nodes[0]
        if oldest_answers:
            net.connect(0, 1)
            net.settle()
            oldest = a.table.get(net.nodes[1].address)
        else:
            oldest = Contact(net.nodes[3].key, net.nodes[3].address,
                             "10.200.0.1", 9)   # nobody listens there
            a.table.offer(oldest, 0)
            # its dial fails only after the ANNOUNCE (a refusal here is
            # at once, a lost host's takes seconds)
            dial = defer.Deferred()
            self.patch(a.links, "connection_to", lambda contact: dial)
        index = a.table.bucket_of(oldest.address)
        unlisted = Contact(b"z" * 294, oldest.address ^ 1)
        listed = Contact(unlisted.der, unlisted.address, "10.9.9.7", 7)
        a.saw_peer(unlisted)
        a.saw_peer(listed)
        if not oldest_answers:
            dial.errback(ConnectionRefusedError())
        net.settle()
        return a, listed, index

    def test_answered_caches_the_newcomer_with_its_address(self):
        """The oldest answers: the newcomer waits in the cache with the
        address its ANNOUNCE gave (the first sighting's copy, put back
        after the PING, had none)."""
        a, listed, index = self.newcomer_announced_while_pinging(True)
        self.assertEqual(a.links.cache.get(listed.address), listed)

    def test_timed_out_takes_the_newcomer_with_its_address(self):
        """The oldest is gone: the newcomer enters the bucket with its
        address, so lookups can reach it."""
        a, listed, index = self.newcomer_announced_while_pinging(False)
        self.assertEqual(a.table.bucket(index), [listed])


class OutboundBound(SynchronousTestCase):

    def test_ell_max_refused_at_start(self):
        """ℓ over ℓmax cannot even be configured (P2P-D6.4)."""
        self.assertRaises(ValueError, SubnetConfig, k=4, tau=16, ell=63)

    def test_max_connections_refuses_inbound(self):
        """Past max connections new inbound links close at once."""
        from p2pmesh import LocalLimits
        net = Network(3, limits=LocalLimits(compression=(),
                                            max_connections=1))
        net.start_all()
        ok = net.connect(1, 0)
        refused = net.connect(2, 0)
        net.settle()
        self.successResultOf(ok)
        self.failureResultOf(refused)
        self.assertEqual(len(net.nodes[0].links.open), 1)


class RedialBackoff(SynchronousTestCase):

    def test_backoff_grows_by_half_up_to_a_minute(self):
        """A contact whose dials fail is redialed after 1 s, then 1.5 s
        (×1.5 each time, P2P-D6.7), never before; after 3 consecutive
        failures it leaves its bucket."""
        net = Network(1, config=SubnetConfig(ell=1))
        net.start_all()
        node = net.nodes[0]
        attempts = []
        dial = net.endpoint_factory

        def counting(host, port):
            attempts.append(net.clock.seconds())
            return dial(host, port)
        node.links._endpoint_factory = counting
        gone = pooled_keys(2)[1]
        der = _keys.public_der(gone)
        node.table.offer(Contact(der, _keys.truncated_address(der, 256),
                                 "10.77.0.1", 4000), 0)
        node.links.fill_outbound()
        net.settle()
        for _ in range(40):
            net.clock.advance(0.25)
            net.settle()
        gaps = [round(b - a, 2) for a, b in zip(attempts, attempts[1:], strict=False)]
        # three consecutive failures and no replacement in the cache: the
        # contact leaves its bucket, and nobody is dialed any more
        self.assertEqual(gaps, [1.0, 1.5])
        self.assertIsNone(node.table.get(_keys.truncated_address(der, 256)))
        node.stop()
