"""The selected connection's writer (wormhole._dilation._writer): frames go to
the socket whole with sendmsg while the transport holds nothing of ours, to
the transport otherwise, always in order."""

from twisted.internet.interfaces import IPushProducer, ISSLTransport, ITCPTransport
from twisted.internet.testing import StringTransport
from twisted.trial import unittest
from zope.interface import alsoProvides, implementer

from wormhole._dilation._writer import GatherWriter, TransportWriter, gather_writer_for

from .fakes import FakeSocket

LIMIT = 100


@implementer(ITCPTransport)
class FakeTCP:
    """What GatherWriter relies on in Twisted's TCP transport
    (twisted.internet.abstract.FileDescriptor): a pull producer is resumed
    once when registered and each time the buffer has emptied; bytes
    only."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = []
        self.producer = None
        self.streaming = None

    def getHandle(self):
        return self.sock

    def writeSequence(self, pieces):
        for p in pieces:
            assert type(p) is bytes, p
        self.buffer.extend(pieces)

    def registerProducer(self, producer, streaming):
        assert self.producer is None
        self.producer, self.streaming = producer, streaming
        if not streaming:
            producer.resumeProducing()

    def unregisterProducer(self):
        self.producer = None

    def drain(self):
        """The socket took everything we held."""
        data, self.buffer = b"".join(self.buffer), []
        if self.producer is not None and not self.streaming:
            self.producer.resumeProducing()
        return data


@implementer(IPushProducer)
class Producer:
    def __init__(self):
        self.events = []

    def pauseProducing(self):
        self.events.append("pause")

    def resumeProducing(self):
        self.events.append("resume")

    def stopProducing(self):
        self.events.append("stop")


def make(room=10 ** 9):
    sock = FakeSocket(room)
    t = FakeTCP(sock)
    return sock, t, gather_writer_for(t, LIMIT)


class Choice(unittest.TestCase):
    def test_plain_tcp_gets_the_gather_writer(self):
        _sock, t, w = make()
        self.assertIsInstance(w, GatherWriter)
        self.assertIs(t.producer, w)
        self.assertFalse(t.streaming)

    def test_other_transports_keep_their_own_buffering(self):
        t = StringTransport()
        w = gather_writer_for(t, LIMIT)
        self.assertIsInstance(w, TransportWriter)
        w.write([b"ab", b"c"])
        self.assertEqual(t.value(), b"abc")
        p = Producer()
        w.register(p)
        self.assertIs(t.producer, p)
        self.assertTrue(t.streaming)
        w.unregister()
        self.assertIsNone(t.producer)

    def test_never_under_tls(self):
        t = FakeTCP(FakeSocket())
        alsoProvides(t, ISSLTransport)
        self.assertIsInstance(gather_writer_for(t, LIMIT), TransportWriter)

    def test_no_sendmsg(self):
        t = FakeTCP(object())
        self.assertIsInstance(gather_writer_for(t, LIMIT), TransportWriter)

    def test_tcp_without_a_handle(self):
        """Twisted's ``iosim.FakeTransport`` says ITCPTransport and has no
        ``getHandle``: its own buffering (the diagrams' Dilation scenario
        runs over it)."""
        from twisted.test.iosim import FakeTransport
        t = FakeTransport(object(), isServer=False)
        self.assertIsInstance(gather_writer_for(t, LIMIT), TransportWriter)


class Order(unittest.TestCase):
    def test_transport_first_until_it_drains(self):
        # it may still hold the handshake when we take over
        sock, t, w = make()
        w.write([b"k", b"cm"])
        self.assertEqual(sock.sent, [])
        self.assertEqual(t.drain(), b"kcm")
        w.write([b"da", b"ta"])
        self.assertEqual(sock.sent, [b"data"])
        self.assertEqual(t.buffer, [])

    def test_partial_send_rest_to_transport(self):
        sock, t, w = make()
        t.drain()
        sock.room = 3
        w.write([b"ab", b"cdef"])
        self.assertEqual(sock.sent, [b"abc"])
        self.assertEqual(t.buffer, [b"def"])
        # later frames queue behind the rest, even with room again
        sock.room = 100
        w.write([b"gh"])
        self.assertEqual(sock.sent, [b"abc"])
        self.assertEqual(t.drain(), b"defgh")
        w.write([b"ij"])
        self.assertEqual(sock.sent, [b"abc", b"ij"])

    def test_kernel_full(self):
        sock, t, w = make()
        t.drain()
        sock.room = 0
        w.write([b"ab", b"cd"])
        self.assertEqual(t.buffer, [b"ab", b"cd"])

    def test_error_left_to_the_transport(self):
        sock, t, w = make()
        t.drain()
        sock.error = BrokenPipeError()
        w.write([b"ab"])
        self.assertEqual(t.buffer, [b"ab"])


class Flow(unittest.TestCase):
    def test_producer_paused_above_the_limit_resumed_at_drain(self):
        sock, t, w = make()
        p = Producer()
        w.register(p)
        w.write([b"x" * LIMIT])
        self.assertEqual(p.events, [])
        w.write([b"y"])
        self.assertEqual(p.events, ["pause"])
        w.write([b"z"])
        self.assertEqual(p.events, ["pause"])
        t.drain()
        self.assertEqual(p.events, ["pause", "resume"])
        # sent directly: never paused
        w.write([b"w" * (3 * LIMIT)])
        self.assertEqual(p.events, ["pause", "resume"])

    def test_registered_while_over_the_limit(self):
        _sock, t, w = make()
        w.write([b"x" * (LIMIT + 1)])
        p = Producer()
        w.register(p)
        self.assertEqual(p.events, ["pause"])
        w.unregister()
        t.drain()
        self.assertEqual(p.events, ["pause"])

    def test_connection_lost_stops_the_producer(self):
        _sock, _t, w = make()
        p = Producer()
        w.register(p)
        w.stopProducing()
        self.assertEqual(p.events, ["stop"])
        w.stopProducing()
        self.assertEqual(p.events, ["stop"])

    def test_close_lets_the_transport_close(self):
        # a registered pull producer would be resumed at the drain instead
        # of the transport closing; after close() everything it is given
        # goes in order behind what it holds
        sock, t, w = make()
        t.drain()
        w.close()
        self.assertIsNone(t.producer)
        w.write([b"bye"])
        self.assertEqual(sock.sent, [])
        self.assertEqual(t.buffer, [b"bye"])
