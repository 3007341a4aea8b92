"""The ProxyTunnel machine and ProxyClientEndpoint on a fake transport and
clock (docs/proxy.md, "How it is built"): the caller's protocol is built
only once the proxy said yes, sees every byte after that, and every way
to fail gives one ProxyError naming the proxy."""
from twisted.internet import defer
from twisted.internet.error import ConnectionDone, ConnectionRefusedError
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._interfaces import IProxy
from wormhole._proxy._negotiate import negotiation_for
from wormhole._proxy._tunnel import HANDSHAKE_TIMEOUT, ProxyClientEndpoint, ProxyTunnel
from wormhole.proxy import Proxy, ProxyError, ProxyUnreachable, parse_proxy_url

OK = b"\x05\x00\x00\x01\x7f\x00\x00\x01\x04\x38"


class Recorder(Protocol):
    def __init__(self):
        self.data = b""
        self.lost = None

    def connectionMade(self):
        self.made = True

    def dataReceived(self, data):
        self.data += data

    def connectionLost(self, reason):
        self.lost = reason


def tunnel(url="socks5://127.0.0.1:1080"):
    clock = Clock()
    proxy = parse_proxy_url(url)
    t = ProxyTunnel(negotiation_for(proxy, "relay.example", 4001),
                    Factory.forProtocol(Recorder), clock, proxy)
    transport = StringTransport()
    t.makeConnection(transport)
    return t, transport, clock


class Tunnel(unittest.TestCase):

    def test_opens_then_forwards(self):
        t, transport, clock = tunnel()
        self.assertEqual(transport.value(), b"\x05\x01\x00")
        t.dataReceived(b"\x05\x00")
        self.assertFalse(t.when_open.called)
        t.dataReceived(OK + b"first")
        inner = self.successResultOf(t.when_open)
        self.assertIsInstance(inner, Recorder)
        self.assertIs(inner.transport, transport)
        t.dataReceived(b" second")
        self.assertEqual(inner.data, b"first second")
        self.assertEqual(clock.getDelayedCalls(), [])  # the timeout is gone
        t.connectionLost(Failure(ConnectionDone()))
        self.assertTrue(inner.lost.check(ConnectionDone))

    def test_refusal_aborts(self):
        t, transport, clock = tunnel("http://alice:s3cret@127.0.0.1:3128")
        t.dataReceived(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
        f = self.failureResultOf(t.when_open, ProxyError)
        self.assertIn("http://alice:***@127.0.0.1:3128", f.getErrorMessage())
        self.assertTrue(transport.disconnecting)
        self.assertEqual(clock.getDelayedCalls(), [])
        t.dataReceived(b"more")  # after the refusal: ignored
        t.connectionLost(Failure(ConnectionDone()))

    def test_timeout(self):
        t, transport, clock = tunnel()
        clock.advance(HANDSHAKE_TIMEOUT)
        f = self.failureResultOf(t.when_open, ProxyError)
        self.assertEqual(f.getErrorMessage(),
                         "the proxy socks5://127.0.0.1:1080 did not answer within 30 s")
        self.assertTrue(transport.disconnecting)

    def test_closed_during_handshake(self):
        t, transport, clock = tunnel()
        t.connectionLost(Failure(ConnectionDone()))
        f = self.failureResultOf(t.when_open, ProxyError)
        self.assertIn("closed the connection during its handshake", f.getErrorMessage())
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_cancel(self):
        t, transport, clock = tunnel()
        t.when_open.cancel()
        self.failureResultOf(t.when_open, defer.CancelledError)
        self.assertTrue(transport.disconnecting)
        self.assertEqual(clock.getDelayedCalls(), [])
        t.connectionLost(Failure(ConnectionDone()))


class FakeEndpoint:
    def __init__(self, result=None):
        self.result = result
        self.factories = []

    def connect(self, factory):
        self.factories.append(factory)
        if self.result is not None:
            return defer.fail(self.result)
        self.d = defer.Deferred()
        return self.d


class Endpoint(unittest.TestCase):

    def test_unreachable_proxy(self):
        proxy = parse_proxy_url("socks5://bob:s3cret@127.0.0.1:1")
        ep = ProxyClientEndpoint(Clock(), proxy, FakeEndpoint(ConnectionRefusedError()),
                                 "relay.example", 4001, negotiation_for)
        f = self.failureResultOf(ep.connect(Factory.forProtocol(Recorder)), ProxyUnreachable)
        self.assertTrue(f.getErrorMessage().startswith(
            "cannot reach the proxy socks5://bob:***@127.0.0.1:1: Connection was refused"))

    def test_fires_with_the_callers_protocol(self):
        to_proxy = FakeEndpoint()
        ep = ProxyClientEndpoint(Clock(), parse_proxy_url("socks5://127.0.0.1:1080"), to_proxy,
                                 "relay.example", 4001, negotiation_for)
        d = ep.connect(Factory.forProtocol(Recorder))
        t = to_proxy.factories[0].buildProtocol(None)
        t.makeConnection(StringTransport())
        to_proxy.d.callback(t)
        self.assertNoResult(d)
        t.dataReceived(b"\x05\x00" + OK)
        self.assertIsInstance(self.successResultOf(d), Recorder)

    def test_cancel_while_negotiating(self):
        to_proxy = FakeEndpoint()
        ep = ProxyClientEndpoint(Clock(), parse_proxy_url("socks5://127.0.0.1:1080"), to_proxy,
                                 "relay.example", 4001, negotiation_for)
        d = ep.connect(Factory.forProtocol(Recorder))
        t = to_proxy.factories[0].buildProtocol(None)
        transport = StringTransport()
        t.makeConnection(transport)
        to_proxy.d.callback(t)
        d.cancel()
        self.failureResultOf(d, defer.CancelledError)
        self.assertTrue(transport.disconnecting)


class ProxyObject(unittest.TestCase):

    def test_interface_and_routes(self):
        p = Proxy(Clock(), "socks5://u:s3cret@127.0.0.1:1080", no_proxy="direct.example")
        verifyObject(IProxy, p)
        self.assertFalse(p.direct)
        self.assertTrue(p.routes("relay.example"))
        self.assertFalse(p.routes("direct.example"))
        self.assertEqual(p.route_note("relay.example"),
                         " (through the proxy socks5://u:***@127.0.0.1:1080)")
        self.assertEqual(p.route_note("direct.example"), "")
        self.assertNotIn("s3cret", repr(p))

    def test_stream_via(self):
        from twisted.internet.endpoints import HostnameEndpoint
        p = Proxy(Clock(), "http://127.0.0.1:3128", no_proxy="direct.example")
        self.assertIsInstance(p.stream_via("relay.example", 4001), ProxyClientEndpoint)
        self.assertIsInstance(p.stream_via("direct.example", 4001), HostnameEndpoint)
        # TLS wraps the whole tunnel: end to end with the server
        wrapped = p.stream_via("mailbox.example", 443, tls=True)
        self.assertIsInstance(wrapped._wrappedEndpoint, ProxyClientEndpoint)
