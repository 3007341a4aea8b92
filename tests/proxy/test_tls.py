"""TLS and proxies (docs/proxy.md, "What goes through it"), on loopback:
an ``https://`` proxy (tinyproxy behind a TLS front, so CONNECT travels
inside TLS to the proxy) and TLS end to end with the server through the
tunnel (what ``wss://`` uses): TLS inside TLS, both certificates checked.
The CA is this test's own; the client trusts it and nothing else."""
import os
import shutil

from twisted.internet import defer, protocol, reactor, ssl
from twisted.protocols.portforward import ProxyFactory
from twisted.trial import unittest

import wormhole.proxy as proxy_module
from wormhole._transit_helpers import allocate_tcp_port
from wormhole.proxy import Proxy, ProxyError

from .._certs import self_signed
from ..cli._process import CLIProcess


class Echo(protocol.Protocol):
    def dataReceived(self, data):
        self.transport.write(data)


class Collect(protocol.Protocol):
    def __init__(self):
        self.data = b""
        self.got = defer.Deferred()

    def dataReceived(self, data):
        self.data += data
        if b"\n" in self.data and not self.got.called:
            self.got.callback(self.data)


class HTTPSProxy(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        tinyproxy = shutil.which("tinyproxy") or "/usr/sbin/tinyproxy"
        if not os.access(tinyproxy, os.X_OK):
            raise AssertionError("tests/proxy needs tinyproxy; `./dev test` installs it")
        tmp = os.path.abspath(self.mktemp())
        os.makedirs(tmp)
        self.log = os.path.join(tmp, "tinyproxy.log")
        port = allocate_tcp_port()
        conf = os.path.join(tmp, "tinyproxy.conf")
        with open(conf, "w") as f:
            f.write(f"Port {port}\nListen 127.0.0.1\nLogLevel Info\nLogFile \"{self.log}\"\n"
                    "Allow 127.0.0.1\nMaxClients 5\n")
        proc = CLIProcess.spawn(self, reactor, [tinyproxy, "-d", "-c", conf], name="tinyproxy")
        self.assertIsNotNone(proc)
        yield self._listening(port)
        key, cert = self_signed("localhost")
        self.trusted = ssl.Certificate.loadPEM(cert)
        server_options = ssl.PrivateCertificate.loadPEM(key + cert).options()
        # the TLS front: https://localhost:FRONT is tinyproxy inside TLS
        front = yield reactor.listenSSL(0, ProxyFactory("127.0.0.1", port), server_options,
                                        interface="127.0.0.1")
        self.addCleanup(front.stopListening)
        self.front_port = front.getHost().port
        # the target: a TLS echo server, reached through the tunnel
        echo = yield reactor.listenSSL(0, protocol.Factory.forProtocol(Echo), server_options,
                                       interface="127.0.0.1")
        self.addCleanup(echo.stopListening)
        self.echo_port = echo.getHost().port
        real = proxy_module.optionsForClientTLS
        self.patch(proxy_module, "optionsForClientTLS",
                   lambda host: real(host, trustRoot=self.trusted))

    @defer.inlineCallbacks
    def _listening(self, port):
        from twisted.internet.endpoints import TCP4ClientEndpoint
        from twisted.internet.task import deferLater
        for _ in range(100):
            try:
                p = yield TCP4ClientEndpoint(reactor, "127.0.0.1", port).connect(
                    protocol.Factory.forProtocol(protocol.Protocol))
                p.transport.loseConnection()
                return
            except Exception:  # noqa: BLE001 -- not up yet
                yield deferLater(reactor, 0.1, lambda: None)
        raise AssertionError("tinyproxy did not listen within 10 s")

    @defer.inlineCallbacks
    def test_tls_inside_an_https_proxy(self):
        p = Proxy(reactor, f"https://localhost:{self.front_port}")
        ep = p.stream_via("localhost", self.echo_port, tls=True)
        client = yield ep.connect(protocol.Factory.forProtocol(Collect))
        client.transport.write(b"through two TLS layers\n")
        self.assertEqual((yield client.got), b"through two TLS layers\n")
        client.transport.loseConnection()
        with open(self.log) as f:
            self.assertIn(f"CONNECT localhost:{self.echo_port}", f.read())

    @defer.inlineCallbacks
    def test_untrusted_proxy_certificate(self):
        """The proxy's own certificate is checked: without our CA the
        connection fails, as an unreachable proxy."""
        self.patch(proxy_module, "optionsForClientTLS", ssl.optionsForClientTLS)
        p = Proxy(reactor, f"https://localhost:{self.front_port}")
        ep = p.stream_via("localhost", self.echo_port)
        with self.assertRaises(ProxyError) as c:
            yield ep.connect(protocol.Factory.forProtocol(Collect))
        self.assertIn(f"the proxy https://localhost:{self.front_port} closed the connection",
                      str(c.exception))
        self.assertIn("certificate verify failed", str(c.exception))
