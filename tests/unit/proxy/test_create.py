"""``create(proxy=...)`` and ``from_serialized(proxy=...)`` (docs/proxy.md,
docs/api.md): a URL or a Proxy; the Mailbox connection's endpoint goes
through it; with ``tor=`` a ValueError."""
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest

import wormhole
from wormhole._proxy._tunnel import ProxyClientEndpoint
from wormhole.proxy import Proxy, ProxyURLError

APPID = "example.com/proxy-test"
URL = "ws://mailbox.example:4000/v1"


class Create(unittest.TestCase):

    def make(self, **kwargs):
        # on a memory reactor that never runs: nothing connects, nothing
        # is left behind on the real one
        return wormhole.create(APPID, URL, MemoryReactorClock(), **kwargs)

    def test_url_becomes_a_proxy(self):
        w = self.make(proxy="socks5://u:s3cret@127.0.0.1:1080")
        rc = w._boss._RC
        self.assertIsInstance(rc._proxy, Proxy)
        self.assertIsInstance(rc._make_endpoint("ws", "mailbox.example", 4000),
                              ProxyClientEndpoint)
        # wss: TLS with the server, around the tunnel
        wrapped = rc._make_endpoint("wss", "mailbox.example", 443)
        self.assertIsInstance(wrapped._wrappedEndpoint, ProxyClientEndpoint)

    def test_proxy_object_and_no_proxy(self):
        proxy = Proxy(Clock(), "http://127.0.0.1:3128", no_proxy="mailbox.example")
        w = self.make(proxy=proxy)
        self.assertIs(w._boss._RC._proxy, proxy)
        self.assertNotIsInstance(w._boss._RC._make_endpoint("ws", "mailbox.example", 4000),
                                 ProxyClientEndpoint)

    def test_no_punching_behind_a_proxy(self):
        w = self.make(proxy="http://127.0.0.1:3128")
        self.assertIsNone(w._boss._nat)

    def test_tor_and_proxy(self):
        with self.assertRaises(ValueError) as c:
            wormhole.create(APPID, URL, MemoryReactorClock(), tor=object(),
                            proxy="http://127.0.0.1:3128")
        self.assertIn("exclude each other", str(c.exception))

    def test_bad_url(self):
        with self.assertRaises(ProxyURLError):
            wormhole.create(APPID, URL, MemoryReactorClock(), proxy="ftp://p")
