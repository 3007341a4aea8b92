"""L4 + L5 in memory (Dilation protocol, "L5 subchannels",
"Initiating Dilation"): two sides' Outbound/Inbound/registry joined by an
in-memory L3; endpoints open subchannels both ways, ids follow the
Leader-odd/Follower-even rule, data flows, close handshakes complete,
connect() and listen() wait for the first connection with the peer."""

from twisted.internet.interfaces import (
    IListeningPort,
    IStreamClientEndpoint,
    IStreamServerEndpoint,
)
from twisted.internet.protocol import Factory, Protocol
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._endpoints import (
    SubchannelConnectorEndpoint,
    SubchannelListenerEndpoint,
    SubchannelRegistry,
)
from wormhole._dilation._inbound import Inbound
from wormhole._dilation._outbound import Outbound
from wormhole._dilation._records import Ack

from .fakes import FakeConnection


class Collect(Protocol):
    def connectionMade(self):
        self.got = []
        self.lost = False
        self.factory.made.append(self)

    def dataReceived(self, data):
        self.got.append(data)

    def connectionLost(self, reason):
        self.lost = True


def factory():
    f = Factory.forProtocol(Collect)
    f.made = []
    return f


def up(registry, is_leader):
    """The peer's please gave the role, then the first connection came up."""
    registry.set_role(is_leader)
    registry.connected()


class Side:
    def __init__(self, queue):
        self.outbound = Outbound()
        self.inbound = Inbound()
        self.registry = SubchannelRegistry(lambda f, *a: queue.append((f, a)))
        self.inbound.wire(self.outbound, self.registry)
        self.registry.wire(self.inbound, self.outbound)

    def got_record(self, r):
        if isinstance(r, Ack):
            self.outbound.handle_ack(r.resp_seqnum)
        else:
            self.inbound.got_record(r)
            self.inbound.end_of_batch()


class Pair(unittest.TestCase):
    def setUp(self):
        self.queue = []
        self.leader = Side(self.queue)
        self.follower = Side(self.queue)
        self.cl = FakeConnection(name="l", is_leader=True)
        self.cf = FakeConnection(name="f")
        for side, c in ((self.leader, self.cl), (self.follower, self.cf)):
            side.outbound.use_connection(c)
            side.inbound.use_connection(c)

    def pump(self):
        while self.cl.sent or self.cf.sent or self.queue:
            while self.cl.sent:
                self.follower.got_record(self.cl.sent.pop(0))
            while self.cf.sent:
                self.leader.got_record(self.cf.sent.pop(0))
            while self.queue:
                f, a = self.queue.pop(0)
                f(*a)

    def test_interfaces(self):
        """Endpoints provide Twisted's endpoint interfaces, the registry ISubchannelListener."""
        reg = self.leader.registry
        verifyObject(IStreamClientEndpoint, SubchannelConnectorEndpoint("x", reg))
        verifyObject(IStreamServerEndpoint, SubchannelListenerEndpoint("x", reg))
        verifyObject(I.ISubchannelListener, reg)

    def test_open_both_ways_and_close(self):
        """Each side opens a subchannel to the other's listener: Leader ids
        are odd, Follower ids even; data flows both ways; a close from the
        initiator ends both protocols."""
        up(self.leader.registry, True)
        up(self.follower.registry, False)
        fl, ff = factory(), factory()
        ports = []
        SubchannelListenerEndpoint("echo", self.leader.registry).listen(fl).addCallback(
            ports.append)
        SubchannelListenerEndpoint("echo", self.follower.registry).listen(ff).addCallback(
            ports.append)
        verifyObject(IListeningPort, ports[0])
        got = []
        for reg in (self.leader.registry, self.leader.registry, self.follower.registry):
            SubchannelConnectorEndpoint("echo", reg).connect(factory()).addCallback(got.append)
        self.assertEqual([p.transport.getPeer().scid for p in got], [1, 3, 2])
        got[0].transport.write(b"from leader")
        got[2].transport.write(b"from follower")
        self.pump()
        self.assertEqual([p.transport.getPeer().scid for p in ff.made], [1, 3])
        self.assertEqual([p.transport.getPeer().scid for p in fl.made], [2])
        self.assertEqual(ff.made[0].got, [b"from leader"])
        self.assertEqual(fl.made[0].got, [b"from follower"])
        ff.made[0].transport.write(b"reply")
        got[0].transport.loseConnection()
        self.pump()
        self.assertEqual(got[0].got, [b"reply"])
        self.assertTrue(got[0].lost)
        self.assertTrue(ff.made[0].lost)
        self.assertFalse(got[1].lost)
        self.assertEqual(len(self.leader.outbound._queue), 0)

    def test_open_before_listen(self):
        """An OPEN (and its data) that arrives before listen() is handed to
        the factory when listen() is called."""
        up(self.leader.registry, True)
        got = []
        SubchannelConnectorEndpoint("late", self.leader.registry).connect(
            factory()).addCallback(got.append)
        got[0].transport.write(b"early")
        self.pump()
        f = factory()
        SubchannelListenerEndpoint("late", self.follower.registry).listen(f)
        self.pump()
        self.assertEqual(f.made[0].got, [b"early"])

    def test_unexpected_subprotocol_refused(self):
        """With expected_subprotocols, an OPEN for another name is answered
        with CLOSE at once (the opener's protocol ends); an expected name
        still waits for its listener."""
        self.follower.registry._expected = frozenset(["wanted"])
        up(self.leader.registry, True)
        got = []
        for name in ("other", "wanted"):
            SubchannelConnectorEndpoint(name, self.leader.registry).connect(
                factory()).addCallback(got.append)
        got[1].transport.write(b"kept")
        self.pump()
        self.assertTrue(got[0].lost)
        self.assertFalse(got[1].lost)
        f = factory()
        SubchannelListenerEndpoint("wanted", self.follower.registry).listen(f)
        self.pump()
        self.assertEqual(f.made[0].got, [b"kept"])

    def test_connect_and_listen_wait_for_connection(self):
        """connect() and listen() fire once the first connection with the
        peer is up, not when the role is known (the reference 0.24's
        moment); a failure (old peer) errbacks waiting and later calls."""
        got, ports = [], []
        reg = self.follower.registry
        SubchannelConnectorEndpoint("x", reg).connect(factory()).addCallback(got.append)
        SubchannelListenerEndpoint("y", reg).listen(factory()).addCallback(ports.append)
        reg.set_role(False)
        self.assertEqual((got, ports), ([], []))
        reg.connected()
        self.assertEqual(got[0].transport.getPeer().scid, 2)
        verifyObject(IListeningPort, ports[0])
        reg = Side([]).registry
        d1 = SubchannelConnectorEndpoint("x", reg).connect(factory())
        l1 = SubchannelListenerEndpoint("x", reg).listen(factory())
        reg.fail(ValueError("old peer"))
        d2 = SubchannelConnectorEndpoint("x", reg).connect(factory())
        l2 = SubchannelListenerEndpoint("y", reg).listen(factory())
        for d in (d1, l1, d2, l2):
            self.failureResultOf(d, ValueError)

    def test_double_listen(self):
        """listen() twice for one subprotocol fails the second."""
        reg = self.leader.registry
        SubchannelListenerEndpoint("a", reg).listen(factory())
        self.failureResultOf(SubchannelListenerEndpoint("a", reg).listen(factory()), ValueError)

    def test_close_all(self):
        """close_all() ends open subchannels on both kinds and fails
        connect() calls still waiting for the connection."""
        up(self.leader.registry, True)
        got = []
        SubchannelConnectorEndpoint("x", self.leader.registry).connect(
            factory()).addCallback(got.append)
        waiting = SubchannelConnectorEndpoint("x", self.follower.registry).connect(factory())
        self.follower.registry.close_all()
        self.failureResultOf(waiting)
        self.leader.registry.close_all()
        self.assertTrue(got[0].lost)
