"""Four real nodes on 127.0.0.1 with the real reactor (P2P-D8.4):
bootstrap, SHOUT to all, WHISPER ACKed, set/get across nodes. Waits on
Deferreds only; every port and link is closed in the cleanups."""

from twisted.internet import defer, reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.trial.unittest import TestCase

from p2pmesh import LocalLimits, Node, SubnetConfig
from p2pmesh._config import SHOUT, WHISPER

from ._fixtures import pooled_keys


def client_endpoint(host, port):
    return TCP4ClientEndpoint(reactor, host, port, timeout=10)


class FourNodes(TestCase):

    timeout = 60

    @defer.inlineCallbacks
    def start_node(self, key, bootstrap=()):
        node = Node(SubnetConfig(k=8, ell=2), key, reactor, client_endpoint,
                    limits=LocalLimits(),
                    listen_endpoint=TCP4ServerEndpoint(
                        reactor, 0, interface="127.0.0.1"),
                    bootstrap=bootstrap)
        self.addCleanup(node.stop)
        yield node.start()
        return node

    @defer.inlineCallbacks
    def test_four_nodes(self):
        """Bootstrap through the first node; every node gets a SHOUT; a
        WHISPER is ACKed; a value set on one node is read on another."""
        keys = pooled_keys(4)
        first = yield self.start_node(keys[0])
        host, port = first.advertised()
        self.assertEqual(host, "127.0.0.1")
        nodes = [first]
        for key in keys[1:]:
            nodes.append((yield self.start_node(key, [(host, port)])))

        shouts = [defer.Deferred() for _ in nodes]
        for node, d in zip(nodes, shouts, strict=False):
            node.on(SHOUT, lambda s, v, d=d: d.called or d.callback(v))
        yield nodes[2].shout({"hello": "mesh"})
        others = [d for i, d in enumerate(shouts) if i != 2]
        results = yield defer.gatherResults(others)
        self.assertEqual(results, [{"hello": "mesh"}] * 3)

        whispered = defer.Deferred()
        nodes[3].on(WHISPER, lambda s, v: whispered.callback((s, v)))
        yield nodes[1].whisper(nodes[3].key, "psst")
        sender, value = yield whispered
        self.assertEqual((sender, value), (nodes[1].key, "psst"))

        acks = yield nodes[0].set(b"real-key", [b"bytes", 1.5])
        self.assertGreaterEqual(acks, 1)
        value = yield nodes[3].get(b"real-key")
        self.assertEqual(value, [b"bytes", 1.5])
