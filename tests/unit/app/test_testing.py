"""wormhole.testing: two real wormholes through an in-memory Mailbox,
messages and Dilation, on a task.Clock (a Clock has no listenTCP or
connectTCP at all: opening a real port would fail), and the drift check."""

import sys

from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole.testing import MEMORY_URL, memory_server, signature_drift

APPID = "example.com/testing-double"


class Collect(Protocol):
    def connectionMade(self):
        self.got = b""
        self.lost = None
        self.factory.made.append(self)

    def dataReceived(self, data):
        self.got += data

    def connectionLost(self, reason):
        self.lost = reason


def collector():
    f = Factory.forProtocol(Collect)
    f.made = []
    return f


class MemoryWormholes(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = memory_server(self.clock)

    def pair(self, **kwargs):
        a = self.server.create(APPID, MEMORY_URL, self.clock, **kwargs)
        b = self.server.create(APPID, MEMORY_URL, self.clock, **kwargs)
        a.allocate_code()
        self.server.flush()
        code = self.result(a.get_code())
        b.set_code(code)
        self.server.flush()
        return a, b

    def result(self, d):
        """Deferreds fire in a later turn, as with a real reactor."""
        self.server.flush()
        return self.successResultOf(d)

    def close(self, *wormholes):
        ds = [w.close() for w in wormholes]
        self.server.flush()
        return [self.successResultOf(d) for d in ds]

    def test_messages(self):
        """Two wormholes agree on a key and exchange messages both ways,
        in order, with the Clock never advanced past zero."""
        a, b = self.pair()
        self.assertEqual(self.result(a.get_verifier()),
                         self.result(b.get_verifier()))
        a.send_message(b"one")
        a.send_message(b"two")
        b.send_message(b"back")
        self.server.flush()
        self.assertEqual(self.result(b.get_message()), b"one")
        self.assertEqual(self.result(b.get_message()), b"two")
        self.assertEqual(self.result(a.get_message()), b"back")
        self.assertEqual(self.close(a, b), ["happy", "happy"])
        self.assertEqual(self.clock.seconds(), 0)

    def test_dilation(self):
        """Both dilate; a subchannel carries bytes both ways and closes;
        when_dilated() fires; status reaches ConnectedPeer."""
        from wormhole._status import ConnectedPeer
        a, b = self.pair(dilation=True)
        statuses = []
        da = a.dilate(on_status_update=statuses.append)
        db = b.dilate()
        listening = collector()
        self.result(db.listener_for("echo").listen(listening))
        self.server.flush()
        self.result(da.when_dilated())
        self.result(db.when_dilated())
        client = self.result(da.connector_for("echo").connect(collector()))
        client.transport.write(b"to b")
        self.server.flush()
        server = listening.made[0]
        self.assertEqual(server.got, b"to b")
        server.transport.write(b"to a")
        self.server.flush()
        self.assertEqual(client.got, b"to a")
        client.transport.loseConnection()
        self.server.flush()
        self.assertIsNotNone(server.lost)
        self.assertTrue(any(isinstance(s.peer_connection, ConnectedPeer) for s in statuses))
        self.assertEqual(self.close(a, b), ["happy", "happy"])


class Drift(unittest.TestCase):
    def test_double_matches_create(self):
        """MemoryMailbox.create has wormhole.create's public signature."""
        self.assertEqual(signature_drift(memory_server(Clock()).create), [])

    def test_drift_is_reported(self):
        """A create-like function with another order, a missing or an
        extra parameter, or another default is reported."""
        def reordered(appid, relay_url, reactor, delegate=None,
                      versions={},  # noqa: B006  create's default, reordered
                      journal=None,
                      tor=None, timing=None, stderr=sys.stderr, dilation=False,
                      _eventual_queue=None, on_status_update=None, *, welcome_handler=None,
                      proxy=None):
            pass

        def missing(appid, relay_url, reactor):
            pass
        def other_default(appid, relay_url, reactor, versions=None, delegate=None,
                          journal=None, tor=None, timing=None, stderr=sys.stderr,
                          dilation=False, _eventual_queue=None, on_status_update=None, *,
                          welcome_handler=None, proxy=None):
            pass
        self.assertEqual(len(signature_drift(reordered)), 2)  # versions and delegate
        self.assertEqual(len(signature_drift(missing)), 11)
        self.assertEqual(signature_drift(other_default),
                         ["parameter 3: wormhole.create has ('versions', 'POSITIONAL_OR_KEYWORD',"
                          " '{}'), the double has ('versions', 'POSITIONAL_OR_KEYWORD', 'None')"])

    def test_wormhole_objects_are_the_real_ones(self):
        """The double's wormholes are this library's own classes, so their
        methods cannot drift from the real ones."""
        from wormhole.wormhole import DeferredWormhole, DelegatedWormhole
        server = memory_server(Clock())
        self.assertIsInstance(server.create(APPID, MEMORY_URL, Clock()), DeferredWormhole)

        class Delegate:
            pass
        self.assertIsInstance(server.create(APPID, MEMORY_URL, Clock(), delegate=Delegate()),
                              DelegatedWormhole)
