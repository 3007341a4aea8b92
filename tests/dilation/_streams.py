"""Byte streams for the Dilation tests (and the hostile ones): a collecting
protocol and its factory, a flow-controlled source and a sink, and
``split_at`` (data cut at given offsets). No network, no process."""

import hashlib

from twisted.internet import defer, reactor
from twisted.internet.interfaces import IPushProducer
from twisted.internet.protocol import Factory, Protocol
from zope.interface import implementer


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
        if (self.factory.expect and sum(map(len, self.buf)) >= self.factory.expect
                and not self.factory.got_all.called):
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


@implementer(IPushProducer)
class Source:
    """Writes ``total`` bytes of a deterministic stream in chunks while not
    paused, one reactor turn per burst; closes when done."""

    def __init__(self, transport, total, chunk=65536):
        self.t = transport
        self.total = total
        self.sent = 0
        self.paused = False
        self.pauses = 0
        self.h = hashlib.sha256()
        self.block = bytes(i % 251 for i in range(chunk))
        self._call = None
        self.done = defer.Deferred()

    def start(self):
        self.t.registerProducer(self, True)
        self._schedule()

    def _schedule(self):
        if self._call is None and not self.paused and self.sent < self.total:
            self._call = reactor.callLater(0, self._pump)

    def _pump(self):
        self._call = None
        burst = 0
        while not self.paused and self.sent < self.total and burst < 16:
            n = min(len(self.block), self.total - self.sent)
            data = self.block[:n]
            self.h.update(data)
            self.t.write(data)
            self.sent += n
            burst += 1
        if self.sent >= self.total:
            self.t.unregisterProducer()
            self.t.loseConnection()
            if not self.done.called:
                self.done.callback(None)
        else:
            self._schedule()

    def pauseProducing(self):
        if not self.paused:
            self.pauses += 1
        self.paused = True

    def resumeProducing(self):
        self.paused = False
        self._schedule()

    def stopProducing(self):
        self.paused = True
        if self._call is not None:
            self._call.cancel()
            self._call = None


class Sink(Protocol):
    """Hashes what arrives; calls ``factory.on_progress(self, total)``."""

    def connectionMade(self):
        self.h = hashlib.sha256()
        self.n = 0
        self.factory.made_d.callback(self)

    def dataReceived(self, data):
        self.h.update(data)
        self.n += len(data)
        self.factory.on_progress(self, self.n)

    def connectionLost(self, reason):
        self.factory.lost.callback((self.n, self.h.hexdigest()))


def sink_factory(on_progress=lambda p, n: None):
    f = Factory.forProtocol(Sink)
    f.made_d, f.lost, f.on_progress = defer.Deferred(), defer.Deferred(), on_progress
    return f


def split_at(data, cuts):
    cuts = sorted({c % (len(data) + 1) for c in cuts})
    out, prev = [], 0
    for c in cuts + [len(data)]:
        out.append(data[prev:c])
        prev = c
    return out
