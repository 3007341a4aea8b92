"""Our Transit relay next to the reference one (magic-wormhole-transit-relay
0.5): the same raw TCP conversations against both, and the same bytes back
(File-transfer protocol, "Transit": ``please relay HEX for side HEX\\n``, ``ok\\n``).

The reference runs as ``twistd -n transitrelay``; ours both in-process and
as ``twistd -n transitrelay`` with the same command line.
"""
import os

from twisted.internet import defer, protocol, reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

from . import harness
from .harness import InteropTestCase

TOKEN_A = "a" * 64
TOKEN_B = "b" * 64


class _Raw(protocol.Protocol):
    """Collects what the relay sends; lets a test wait for bytes or EOF."""

    def __init__(self):
        self.data = b""
        self.closed = False
        self._waiters = []

    def dataReceived(self, data):
        self.data += data
        self._check()

    def connectionLost(self, reason):
        self.closed = True
        self._check()

    def wait(self, predicate):
        d = defer.Deferred()
        self._waiters.append((predicate, d))
        self._check()
        return d

    def _check(self):
        ready = [(p, d) for (p, d) in self._waiters if p(self)]
        self._waiters = [w for w in self._waiters if w not in ready]
        for _, d in ready:
            d.callback(self)


def handshake(token, side=None):
    if side is None:
        return b"please relay %s\n" % token.encode("ascii")
    return b"please relay %s for side %s\n" % (token.encode("ascii"),
                                               side.encode("ascii"))


class RelayConversations:
    """Mixin: each test runs one conversation against ``start_relay()``
    (a port on 127.0.0.1) and checks the reference's answer bytes."""

    @defer.inlineCallbacks
    def connect(self, port, first_bytes):
        p = yield connectProtocol(
            TCP4ClientEndpoint(reactor, "127.0.0.1", port), _Raw())
        self.addCleanup(self._drop, p)
        p.transport.write(first_bytes)
        return p

    def _drop(self, p):
        if not p.closed:
            p.transport.abortConnection()
            return p.wait(lambda q: q.closed)

    @defer.inlineCallbacks
    def test_pair_with_sides_glues_the_sockets(self):
        """Two handshakes with one token and different sides both get
        "ok\\n"; bytes then flow each way unchanged, and one side's close
        reaches the other as EOF."""
        port = yield self.start_relay()
        a = yield self.connect(port, handshake(TOKEN_A, "1" * 16))
        b = yield self.connect(port, handshake(TOKEN_A, "2" * 16))
        yield a.wait(lambda p: p.data == b"ok\n")
        yield b.wait(lambda p: p.data == b"ok\n")
        a.transport.write(b"\x00from a\xff")
        b.transport.write(b"from b")
        yield b.wait(lambda p: p.data == b"ok\n\x00from a\xff")
        yield a.wait(lambda p: p.data == b"ok\nfrom b")
        a.transport.loseConnection()
        yield b.wait(lambda p: p.closed)
        self.assertEqual(b.data, b"ok\n\x00from a\xff")

    @defer.inlineCallbacks
    def test_legacy_handshake_without_side(self):
        """The old handshake without "for side" still pairs: "ok\\n"."""
        port = yield self.start_relay()
        a = yield self.connect(port, handshake(TOKEN_B))
        b = yield self.connect(port, handshake(TOKEN_B))
        yield a.wait(lambda p: p.data == b"ok\n")
        yield b.wait(lambda p: p.data == b"ok\n")

    @defer.inlineCallbacks
    def test_not_a_handshake(self):
        """Anything else (here an HTTP request) gets "bad handshake\\n" and
        the connection is closed."""
        port = yield self.start_relay()
        c = yield self.connect(port, b"GET / HTTP/1.1\r\n\r\n")
        yield c.wait(lambda p: p.closed)
        self.assertEqual(c.data, b"bad handshake\n")

    @defer.inlineCallbacks
    def test_short_token(self):
        """A 3-character token (the reference wants 64 word characters,
        not only hex, see tests/relay) gets "bad handshake\\n" and the
        connection is closed."""
        port = yield self.start_relay()
        c = yield self.connect(port, b"please relay XYZ for side 1\n")
        yield c.wait(lambda p: p.closed)
        self.assertEqual(c.data, b"bad handshake\n")


class ReferenceRelay(RelayConversations, InteropTestCase):
    """The conversations against the reference relay: they pin its
    behaviour, so the other classes compare ours with it."""

    @defer.inlineCallbacks
    def start_relay(self):
        _, port = yield harness.start_twistd(
            self, reactor, harness.ref_bin("twistd"), "transitrelay",
            "reference transit relay", harness.new_dir(self), [],
            probe=False)
        return port


class OurRelayInProcess(RelayConversations, InteropTestCase):

    @defer.inlineCallbacks
    def start_relay(self):
        from wormhole_relay.testing import start_transit_relay
        r = yield start_transit_relay(reactor)
        self.addCleanup(r.stop)
        return r.port


class OurRelayTwistd(RelayConversations, InteropTestCase):
    """Ours, started with the reference's command line."""

    @defer.inlineCallbacks
    def start_relay(self):
        basedir = harness.new_dir(self)
        _, port = yield harness.start_twistd(
            self, reactor, harness.our_twistd(), "transitrelay",
            "our transit relay (twistd)", basedir,
            ["--usage-db", os.path.join(basedir, "usage.sqlite")],
            probe=False)
        return port
