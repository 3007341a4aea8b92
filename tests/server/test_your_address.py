"""The welcome's ``your-address`` (docs/server.md, "Wire differences from
the reference (decided here)"): what the glue tells a client
about where its connection came from. The side-by-side comparison with the
reference 0.8 server is tests/interop/test_your_address.py."""

import os

from twisted.internet.address import IPv4Address, IPv6Address, UNIXAddress
from twisted.internet.defer import gatherResults
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest

from wormhole_mailbox._plugin import Options, makeService
from wormhole_mailbox._websocket import your_address

V4 = IPv4Address("TCP", "198.51.100.4", 51000)
HEADERS = {"x-real-ip": "2001:db8::7", "x-real-port": "40001"}


class YourAddress(unittest.TestCase):
    def test_ipv4_peer(self):
        """An IPv4 peer: its address under "ipv4" and its port."""
        self.assertEqual(your_address(V4, {}, False),
                         {"ipv4": "198.51.100.4", "port": 51000})

    def test_ipv6_peer(self):
        """An IPv6 peer under "ipv6", in its compressed form."""
        peer = IPv6Address("TCP", "2001:db8:0::1", 443)
        self.assertEqual(your_address(peer, {}, False),
                         {"ipv6": "2001:db8::1", "port": 443})

    def test_v4_mapped_is_ipv4(self):
        """A v4 client of a dual-stack socket arrives as ::ffff:a.b.c.d;
        like the reference, it is told its IPv4 address."""
        peer = IPv6Address("TCP", "::ffff:127.0.0.1", 5000)
        self.assertEqual(your_address(peer, {}, False),
                         {"ipv4": "127.0.0.1", "port": 5000})

    def test_unix_peer(self):
        """A UNIX-socket client (a local proxy) has no address to tell."""
        self.assertIsNone(your_address(UNIXAddress(b"/tmp/s"), {}, False))

    def test_headers_ignored_unless_trusted(self):
        """Anyone can send X-Real-IP: without --trust-x-real-ip the peer
        of the connection is what counts."""
        self.assertEqual(your_address(V4, HEADERS, False)["ipv4"],
                         "198.51.100.4")

    def test_headers_when_trusted(self):
        """With --trust-x-real-ip, the proxy's headers name the client."""
        self.assertEqual(your_address(V4, HEADERS, True),
                         {"ipv6": "2001:db8::7", "port": 40001})

    def test_trusted_but_missing_or_bad_headers(self):
        """Behind a trusted proxy the connection's peer is the proxy: when
        its headers are missing or malformed, nothing is said rather than
        the proxy's address."""
        for headers in ({}, {"x-real-ip": "2001:db8::7"},
                        {"x-real-ip": "not an address", "x-real-port": "1"},
                        {"x-real-ip": "192.0.2.1", "x-real-port": "x"},
                        {"x-real-ip": "192.0.2.1", "x-real-port": "0"},
                        {"x-real-ip": "192.0.2.1", "x-real-port": "65536"}):
            self.assertIsNone(your_address(V4, headers, True), headers)

    def test_option(self):
        """--trust-x-real-ip reaches the factory; off by default."""
        stopped = []
        for args, expected in (([], False), (["--trust-x-real-ip"], True)):
            o = Options()
            o.parseOptions([f"--channel-db={os.path.abspath(self.mktemp())}"]
                           + args)
            svc = makeService(o, reactor=MemoryReactorClock())
            factory = list(svc)[1].factory
            self.assertIs(factory.trust_x_real_ip, expected)
            stopped.append(factory.mailbox.stop())
        return gatherResults(stopped)
