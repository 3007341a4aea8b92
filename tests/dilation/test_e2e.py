"""End to end over loopback: two of our wormholes with our Mailbox server
(and our Transit relay) dilate, open subchannels both ways, move data, and
close (spec 000). Waits on events only; every test leaves the reactor clean."""

import hashlib

from twisted.internet import defer, reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import deferLater
from twisted.trial import unittest

import wormhole
from wormhole.server.testing import start_mailbox_server

APPID = "example.com/dilation-e2e"


class Collector(Protocol):
    """Collects bytes; fires ``factory.done`` with (bytes, sha256) once the
    peer closes."""

    def connectionMade(self):
        self.buf = []
        self.factory.made.append(self)
        if self.factory.made_d and not self.factory.made_d.called:
            self.factory.made_d.callback(self)

    def dataReceived(self, data):
        self.buf.append(data)
        if self.factory.expect and sum(map(len, self.buf)) >= self.factory.expect:
            if not self.factory.got_all.called:
                self.factory.got_all.callback(self)

    def connectionLost(self, reason):
        if not self.factory.lost.called:
            self.factory.lost.callback(b"".join(self.buf))


def collector_factory(expect=None):
    f = Factory.forProtocol(Collector)
    f.made = []
    f.made_d = defer.Deferred()
    f.got_all = defer.Deferred()
    f.lost = defer.Deferred()
    f.expect = expect
    return f


class E2E(unittest.TestCase):
    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, channel_db=self.mktemp())
        self.addCleanup(self._stop_server)

    @defer.inlineCallbacks
    def _stop_server(self):
        yield self.srv.stop()
        yield deferLater(reactor, 0.05, lambda: None)

    @defer.inlineCallbacks
    def pair(self, **dilate_kwargs):
        w1 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             _reconnect_delay=0.05, _reconnect_max_delay=0.2)
        w2 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             _reconnect_delay=0.05, _reconnect_max_delay=0.2)
        self.addCleanup(self._close, w1, w2)
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        kw = dict(_listen_addresses=["127.0.0.1"])
        kw.update(dilate_kwargs)
        d1 = w1.dilate(**kw)
        d2 = w2.dilate(**kw)
        return w1, w2, d1, d2

    @defer.inlineCallbacks
    def _close(self, *ws):
        for w in ws:
            try:
                yield w.close()
            except Exception as e:
                print("close failed", repr(e))
        yield deferLater(reactor, 0.05, lambda: None)

    @defer.inlineCallbacks
    def test_subchannels_both_ways(self):
        """Both sides dilate; each opens a subchannel to the other's
        listener; data arrives intact; a close ends both ends."""
        w1, w2, d1, d2 = yield self.pair()
        f1, f2 = collector_factory(), collector_factory()
        yield d1.listener_for("echo").listen(f1)
        yield d2.listener_for("echo").listen(f2)
        p1 = yield d1.connector_for("echo").connect(collector_factory())
        p2 = yield d2.connector_for("echo").connect(collector_factory())
        self.assertNotEqual(p1.transport.getPeer().scid % 2, p2.transport.getPeer().scid % 2)
        p1.transport.write(b"one to two")
        p2.transport.write(b"two to one")
        p1.transport.loseConnection()
        p2.transport.loseConnection()
        self.assertEqual((yield f2.lost), b"one to two")
        self.assertEqual((yield f1.lost), b"two to one")

    @defer.inlineCallbacks
    def test_bulk_sha256(self):
        """8 MB over one subchannel arrive complete (sha256 checked)."""
        w1, w2, d1, d2 = yield self.pair()
        size = 8 * 1000 * 1000
        f2 = collector_factory()
        yield d2.listener_for("bulk").listen(f2)
        p1 = yield d1.connector_for("bulk").connect(collector_factory())
        block = bytes(range(256)) * 256  # 64 KiB
        h = hashlib.sha256()
        sent = 0
        while sent < size:
            p1.transport.write(block)
            h.update(block)
            sent += len(block)
        p1.transport.loseConnection()
        got = yield f2.lost
        self.assertEqual(len(got), sent)
        self.assertEqual(hashlib.sha256(got).hexdigest(), h.hexdigest())
