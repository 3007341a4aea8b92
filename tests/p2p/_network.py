"""The in-memory network of P2P-D8.3: a fake endpoint factory mapping
(host, port) to listening factories, each link a pair of iosim
FakeTransports with an IOPump, one Clock; settle() pumps all links in
synchronous rounds, so a message's first arrival round is its hop count."""

import bisect
import random

from twisted.internet import defer
from twisted.internet.address import IPv4Address
from twisted.internet.base import DelayedCall
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.test import iosim

from p2pmesh import LocalLimits, Node, SubnetConfig

from ._fixtures import pooled_keys


def _when(call):
    return call.getTime()


class SortedClock(Clock):
    """task.Clock keeping its calls sorted by insertion instead of sorting
    the whole list after every callLater and every call run (thousands of
    timers across 64 nodes); same semantics, resorted only after reset."""

    def __init__(self):
        super().__init__()
        self._dirty = False

    def _mark(self, call):
        self._dirty = True

    def callLater(self, delay, callable, *args, **kw):
        call = DelayedCall(self.seconds() + delay, callable, args, kw,
                           self.calls.remove, self._mark, self.seconds)
        if self._dirty:
            self._sortCalls()
        bisect.insort(self.calls, call, key=_when)
        return call

    def _sortCalls(self):
        if self._dirty:
            self.calls.sort(key=_when)
            self._dirty = False

    def due(self):
        """Is any call due now?"""
        self._sortCalls()
        return bool(self.calls) and self.calls[0].getTime() <= self.seconds()


def _busy(pump):
    return (pump.clientIO.stream or pump.serverIO.stream
            or pump.clientIO.disconnecting != pump.clientIO.disconnected
            or pump.serverIO.disconnecting != pump.serverIO.disconnected)


class _Port:

    def __init__(self, network, address, bind):
        self._network = network
        self._address = address
        self._bind = bind

    def stopListening(self):
        self._network.listeners.pop(self._address, None)

    def getHost(self):
        return IPv4Address("TCP", *self._bind)


class _ServerEndpoint:

    def __init__(self, network, address, bind=None):
        self._network = network
        self._address = address
        self._bind = bind or address

    def listen(self, factory):
        self._network.listeners[self._address] = factory
        return defer.succeed(_Port(self._network, self._address, self._bind))


class _ClientEndpoint:

    def __init__(self, network, address, source):
        self._network = network
        self._address = address
        self._source = source   # the dialing node's IP address

    def connect(self, factory):
        server_factory = self._network.listeners.get(self._address)
        if server_factory is None:
            return defer.fail(ConnectionRefusedError(str(self._address)))
        server = server_factory.buildProtocol(None)
        if server is None:
            return defer.fail(ConnectionRefusedError("full"))
        client = factory.buildProtocol(None)
        self._network.ephemeral += 1
        dialer = IPv4Address("TCP", self._source, self._network.ephemeral)
        listener = IPv4Address("TCP", *self._address)
        server_io = iosim.FakeTransport(server, isServer=True,
                                        hostAddress=listener,
                                        peerAddress=dialer)
        client_io = iosim.FakeTransport(client, isServer=False,
                                        hostAddress=dialer,
                                        peerAddress=listener)
        pump = iosim.connect(server, server_io, client, client_io,
                             greet=False, clock=self._network.clock)
        self._network.pumps.append(pump)
        return defer.succeed(client)


class Network:
    """n nodes at 10.0.x.y:4000 sharing one Clock."""

    def __init__(self, n=0, config=None, limits=None, seed=0):
        self.clock = SortedClock()
        self.config = config or SubnetConfig()
        # no compression offers by default: 20 fewer signed messages per
        # link (the codec and machine tests cover negotiation)
        self.limits = limits or LocalLimits(compression=())
        self.rng = random.Random(seed)
        self.listeners = {}
        self.pumps = []
        self.nodes = []
        self.rounds = 0
        self.ephemeral = 40000
        for _ in range(n):
            self.add_node()

    def endpoint_factory(self, host, port, source="10.255.0.1"):
        return _ClientEndpoint(self, (host, port), source)

    def address_of(self, i):
        return ("10.0.%d.%d" % (i // 250, i % 250 + 1), 4000)

    def add_node(self, bootstrap=(), listening=True, config=None,
                 advertise=True, bind=None):
        """Node i at address_of(i); `bind` listens on another address
        (e.g. 0.0.0.0) while still reachable at address_of(i); without
        `advertise` it announces what it listens on."""
        i = len(self.nodes)
        key = pooled_keys(i + 1)[i]
        address = self.address_of(i)
        server = None
        if listening:
            server = _ServerEndpoint(self, address, bind)
        node = Node(config or self.config, key, self.clock,
                    lambda host, port: self.endpoint_factory(
                        host, port, address[0]),
                    rng=random.Random(self.rng.random()), limits=self.limits,
                    listen_endpoint=server,
                    advertise=address if listening and advertise else None,
                    bootstrap=bootstrap)
        self.nodes.append(node)
        return node

    def start_all(self):
        return [n.start() for n in self.nodes]

    def connect(self, i, j):
        """Node i dials node j (a persistent outbound link)."""
        return self.nodes[i].connect(*self.address_of(j))

    def round(self):
        """One synchronous round: every link moves what was queued, then
        the batches of this turn are flushed (callLater(0))."""
        moved = False
        pumps = [p for p in self.pumps if _busy(p)]
        self.rng.shuffle(pumps)
        for pump in pumps:
            if pump.pump(advanceClock=False):
                moved = True
        self.clock.advance(0)
        self.rounds += 1
        if self.rounds % 64 == 0:
            self.pumps = [p for p in self.pumps
                          if not (p.clientIO.disconnected
                                  and p.serverIO.disconnected)]
        return moved

    def settle(self, limit=10000):
        """Pump until nothing moves (also pending callLater(0)s)."""
        self.clock.advance(0)
        for _ in range(limit):
            if not self.round() and not self.clock.due():
                return
        raise AssertionError("the network does not settle")

    def advance(self, seconds, step=1.0):
        """Move time forward in steps, settling after each."""
        end = self.clock.seconds() + seconds
        while self.clock.seconds() < end:
            self.clock.advance(min(step, end - self.clock.seconds()))
            self.settle()

    def sent(self, opcode):
        return sum(n.links.sent_messages.get(opcode, 0) for n in self.nodes)

    def reset_counts(self):
        for n in self.nodes:
            n.links.sent_messages.clear()

    def connections_total(self):
        """t = connections summed over nodes."""
        return sum(len(n.links.open) for n in self.nodes)

    def stop_all(self):
        ds = [n.stop() for n in self.nodes]
        self.settle()
        return ds


def grow(n, seed, config, quiet=False, batch=1):
    """n join-grown nodes, each joining through a random node that joined
    before its batch. The `batch` joins of a batch run concurrently (the
    same join, the same lookups). `quiet` leaves 31 s after each batch, so
    the joins' transient links idle out (30 s) and the next ANNOUNCEs flood
    over the ℓ-bounded links only; batches keep that quiet time short
    (1024 single joins 31 s apart span 9 simulated hours, each hour every
    node refreshing its buckets)."""
    pooled_keys(n)
    rng = random.Random(seed)
    net = Network(0, config=config, seed=seed)
    joined = 0
    while joined < n:
        size = 1 if joined == 0 else min(batch, n - joined)
        for _ in range(size):
            boot = [net.address_of(rng.randrange(joined))] if joined else []
            net.add_node(bootstrap=boot).start()
        joined += size
        net.settle()
        if quiet:
            net.advance(31, step=31)
    return net


def run(net, d):
    """Settle the network and return what `d` fired with."""
    out = []
    d.addBoth(out.append)
    net.settle()
    assert out, "the Deferred did not fire"
    if hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return out[0]
