"""Transit through a relay over WebSocket (Transit protocol,
"WebSockets Transport"): ours with ours on ws://, a TCP client paired with
a WebSocket one, our client through the reference relay 0.5 --websocket,
and the WebSocket endpoint's handling of message boundaries."""

import hashlib
import os

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet import defer, protocol, reactor
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.trial import unittest

from wormhole._transit._websocket import WebSocketClientEndpoint, WebSocketRefused
from wormhole.transit import TransitReceiver, TransitSender

from .._certs import self_signed
from ._support import LOOPBACK, HashingConsumer, start_reference_relay, start_relay


@defer.inlineCallbacks
def relayed_pair(testcase, sender_relay, receiver_relay, share_hints=True):
    """A Sender and a Receiver that only meet on a relay (no_listen)."""
    s = TransitSender(sender_relay, no_listen=True, reactor=reactor,
                      listen_addresses=LOOPBACK)
    r = TransitReceiver(receiver_relay, no_listen=True, reactor=reactor,
                        listen_addresses=LOOPBACK)
    hs = yield s.get_connection_hints()
    hr = yield r.get_connection_hints()
    s.add_connection_hints(hr if share_hints else [])
    r.add_connection_hints(hs if share_hints else [])
    s.set_transit_key(b"w" * 32)
    r.set_transit_key(b"w" * 32)
    ps, pr = yield defer.gatherResults([s.connect(), r.connect()])
    testcase.addCleanup(ps.close)
    testcase.addCleanup(pr.close)
    return s, ps, pr


@defer.inlineCallbacks
def trade_records(testcase, ps, pr):
    ps.send_record(b"over the web")
    pr.send_record(b"and back")
    testcase.assertEqual((yield pr.receive_record()), b"over the web")
    testcase.assertEqual((yield ps.receive_record()), b"and back")


class OurRelay(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_both_websocket(self):
        """Both sides know the relay only by its ws:// URL: they advertise it
        as a websocket-v1 hint inside relay-v1, meet over WebSocket, and 5 MB
        of records arrive intact with the receiver pausing the pipe."""
        relay = yield start_relay(self, websocket=True)
        s, ps, pr = yield relayed_pair(self, relay.websocket_url, relay.websocket_url)
        hints = yield s.get_connection_hints()
        self.assertEqual(hints, [{"type": "relay-v1", "hints": [
            {"type": "websocket-v1", "priority": 0.0, "url": relay.websocket_url}]}])
        self.assertEqual(ps.describe(), "->relay:" + relay.websocket_url)
        yield trade_records(self, ps, pr)
        data = os.urandom(5 * 1000 * 1000)
        consumer = HashingConsumer()
        received = []

        def got(record):
            consumer.write(record)
            received.append(len(record))
            if sum(received) < len(data):
                return pr.receive_record().addCallback(got)
        d = pr.receive_record().addCallback(got)
        for start in range(0, len(data), 100000):
            ps.send_record(data[start:start + 100000])
        yield d
        self.assertEqual(consumer.hash.hexdigest(), hashlib.sha256(data).hexdigest())

    @defer.inlineCallbacks
    def test_tcp_meets_websocket(self):
        """The Sender knows the relay by TCP, the Receiver by WebSocket, and
        neither learns the other's: the relay pairs the TCP client with the
        WebSocket one."""
        relay = yield start_relay(self, websocket=True)
        s, ps, pr = yield relayed_pair(self, relay.hint, relay.websocket_url,
                                       share_hints=False)
        self.assertEqual(ps.describe(), "->relay:tcp:" + relay.hint[4:])
        self.assertEqual(pr.describe(), "->relay:" + relay.websocket_url)
        yield trade_records(self, ps, pr)
        yield ps.close()
        yield pr.close()
        records = yield relay.when_usage(1)
        self.assertEqual(records[0]["mood"], "happy")

    @defer.inlineCallbacks
    def test_several_relays(self):
        """transit_relay may name several relays (comma-separated, TCP and
        WebSocket): each becomes its own relay-v1 hint, and a dead one does
        not stop the live one from pairing us."""
        relay = yield start_relay(self, websocket=True)
        dead = yield reactor.listenTCP(0, protocol.Factory(), interface="127.0.0.1")
        dead_port = dead.getHost().port
        yield dead.stopListening()
        both = f"ws://127.0.0.1:{dead_port}/,{relay.websocket_url}"
        s, ps, pr = yield relayed_pair(self, both, both)
        hints = yield s.get_connection_hints()
        self.assertEqual([h["hints"][0]["url"] for h in hints],
                         [f"ws://127.0.0.1:{dead_port}/", relay.websocket_url])
        self.assertEqual(pr.describe(), "->relay:" + relay.websocket_url)
        yield trade_records(self, ps, pr)


class ReferenceRelay(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_through_reference_relay_websocket(self):
        """Our Sender on the reference relay 0.5's WebSocket (--websocket),
        our Receiver on its TCP port: records flow both ways."""
        tcp_hint, ws_url = yield start_reference_relay(self, websocket=True)
        s, ps, pr = yield relayed_pair(self, ws_url, tcp_hint, share_hints=False)
        self.assertEqual(ps.describe(), "->relay:" + ws_url)
        yield trade_records(self, ps, pr)

    @defer.inlineCallbacks
    def test_both_on_reference_relay_websocket(self):
        """Both of ours on the reference relay's WebSocket."""
        _, ws_url = yield start_reference_relay(self, websocket=True)
        s, ps, pr = yield relayed_pair(self, ws_url, ws_url)
        yield trade_records(self, ps, pr)


class _Splitter(WebSocketServerProtocol):
    """Sends its script as binary messages cut at odd places, records what
    the client sends (all binary frames, joined)."""

    def onOpen(self):
        self.factory.opened.callback(self)
        for message in self.factory.script:
            self.sendMessage(message, isBinary=self.factory.binary)

    def onMessage(self, payload, isBinary):
        self.factory.got.append((payload, isBinary))
        self.factory.received.callback(None)


class _Recorder(protocol.Protocol):
    want = None

    def connectionMade(self):
        self.data = b""
        self.lost = defer.Deferred()
        self.complete = defer.Deferred()  # fires once ``want`` bytes came
        self.transport.write(b"please relay x for side y\n")

    def dataReceived(self, data):
        self.data += data
        if self.want is not None and len(self.data) >= self.want \
                and not self.complete.called:
            self.complete.callback(None)

    def connectionLost(self, reason):
        self.lost.callback(reason.value)


class Endpoint(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def serve(self, script, binary=True):
        factory = WebSocketServerFactory("ws://127.0.0.1/")
        factory.protocol = _Splitter
        factory.script = script
        factory.binary = binary
        factory.opened = defer.Deferred()
        factory.received = defer.Deferred()
        factory.got = []
        port = yield reactor.listenTCP(0, factory, interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        url = f"ws://127.0.0.1:{port.getHost().port}/"
        ep = WebSocketClientEndpoint(reactor, url, TCP4ClientEndpoint(
            reactor, "127.0.0.1", port.getHost().port))
        return factory, ep

    @defer.inlineCallbacks
    def test_boundaries_mean_nothing(self):
        """A stream cut into one-byte messages, and several lines in one
        message, reach the protocol as the same bytes in order; what it
        writes goes out as binary messages."""
        stream = b"ok\ntransit receiver 00ff ready\n\ngo\n"
        factory, ep = yield self.serve([bytes([b]) for b in stream[:5]]
                                       + [stream[5:]])
        proto = yield ep.connect(protocol.Factory.forProtocol(_Recorder))
        proto.want = len(stream)
        yield proto.complete
        self.assertEqual(proto.data, stream)
        yield factory.received
        self.assertEqual(factory.got, [(b"please relay x for side y\n", True)])
        proto.transport.loseConnection()
        yield proto.lost

    @defer.inlineCallbacks
    def test_text_message_refused(self):
        """A text message from the relay closes the connection (the text
        requires binary messages); the protocol sees none of it."""
        factory, ep = yield self.serve(["ok\n".encode()], binary=False)
        proto = yield ep.connect(protocol.Factory.forProtocol(_Recorder))
        yield proto.lost
        self.assertEqual(proto.data, b"")

    @defer.inlineCallbacks
    def test_not_a_websocket(self):
        """A TCP server that is no WebSocket server fails the dial clearly."""
        port = yield reactor.listenTCP(0, protocol.Factory.forProtocol(_Closer),
                                       interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        n = port.getHost().port
        ep = WebSocketClientEndpoint(reactor, f"ws://127.0.0.1:{n}/",
                                     TCP4ClientEndpoint(reactor, "127.0.0.1", n))
        with self.assertRaises(WebSocketRefused):
            yield ep.connect(protocol.Factory.forProtocol(_Recorder))


class _Closer(protocol.Protocol):
    def dataReceived(self, data):
        self.transport.write(b"HTTP/1.1 404 Not Found\r\n\r\n")
        self.transport.loseConnection()



class Framing(unittest.TestCase):
    def test_masked_binary_frames(self):
        """Our frames are final binary frames, masked with a fresh key, with
        the 7-bit, 16-bit and 64-bit length forms (RFC 6455 5.2, 5.3); the
        compiled masker and the portable one agree."""
        import struct

        from wormhole._transit import _websocket as w
        keys = set()
        for n in (0, 125, 126, 65535, 65536, 300000):
            payload = os.urandom(n)
            frame = bytes(w.binary_frame(payload))
            self.assertEqual(frame[0], 0x82)
            self.assertTrue(frame[1] & 0x80)
            size = frame[1] & 0x7F
            if size == 126:
                size, start = struct.unpack("!H", frame[2:4])[0], 4
            elif size == 127:
                size, start = struct.unpack("!Q", frame[2:10])[0], 10
            else:
                start = 2
            key, masked = frame[start:start + 4], frame[start + 4:]
            keys.add(key)
            self.assertEqual(size, n)
            self.assertEqual(len(masked), n)
            self.assertEqual(w._xor_big_int(key, masked), payload)
            portable = bytearray(frame[:start + 4]) + payload
            w._mask_portable(portable, start + 4, key)
            self.assertEqual(bytes(portable), frame)
        self.assertGreater(len(keys), 1)


class SecureWebSocket(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_wss(self):
        """A relay behind wss:// (TLS, the host name checked against the
        certificate): both sides meet there and records flow; the same
        client refuses a certificate it does not trust."""
        from twisted.internet import ssl

        from wormhole._transit import _websocket
        from wormhole_relay.server import make_websocket_factory
        relay = yield start_relay(self, websocket=True)
        key_pem, cert_pem = self_signed("localhost")
        server_cert = ssl.PrivateCertificate.loadPEM(key_pem + cert_pem)
        factory = make_websocket_factory(relay.relay, "wss://localhost/", reactor=reactor)
        port = yield reactor.listenSSL(0, factory, server_cert.options(),
                                       interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        url = f"wss://localhost:{port.getHost().port}/"
        factory.setSessionParameters(url=url)
        trusted = ssl.Certificate.loadPEM(cert_pem)
        real_options = _websocket.optionsForClientTLS
        self.patch(_websocket, "optionsForClientTLS",
                   lambda host: real_options(host, trustRoot=trusted))
        s, ps, pr = yield relayed_pair(self, url, url)
        self.assertEqual(ps.describe(), "->relay:" + url)
        yield trade_records(self, ps, pr)
        # without our trust root: refused, and connect() says why
        from wormhole.transit import TransitError
        self.patch(_websocket, "optionsForClientTLS", real_options)
        lone = TransitSender(url, no_listen=True, reactor=reactor, connect_timeout=10)
        lone.set_transit_key(b"w" * 32)
        with self.assertRaises(TransitError) as e:
            yield lone.connect()
        self.assertIn("certificate verify failed", str(e.exception))
