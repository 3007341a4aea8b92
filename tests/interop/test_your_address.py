"""The welcome's ``your-address`` (docs/server.md, "Wire differences from
the reference (decided here)"), our server beside the
reference 0.8 server: for the same kind of connection both tell the client
the same thing, the address and port its connection came from.

Both servers run as ``twistd wormhole-mailbox`` listening dual-stack on
``::`` (the reference's default endpoint), so that a client on 127.0.0.1
arrives as a v4-mapped IPv6 peer and one on ::1 as a plain IPv6 peer.
"""
from twisted.internet import defer, reactor

from . import rawclient
from .harness import InteropTestCase

DUAL_STACK = ["--port", r"tcp:0:interface=\:\:"]
PROXY_HEADERS = {"X-Real-IP": "203.0.113.7", "X-Real-Port": "40001"}


class YourAddress(InteropTestCase):

    @defer.inlineCallbacks
    def welcome_from(self, server, host, headers=None):
        """The welcome's dict and the client's own (host, port) of one
        connection to ``server`` over ``host``."""
        url = "ws://%s:%d/v1" % (host, server.port)
        c = yield rawclient.connect(reactor, url, headers=headers)
        self.addCleanup(c.close)
        got = yield c.sync()
        welcome, = [m["welcome"] for m in got if m.get("type") == "welcome"]
        me = c.transport.getHost()
        return welcome, (me.host, me.port)

    @defer.inlineCallbacks
    def both(self, host, headers=None, our_args=()):
        ref = yield self.start_ref_server(extra_args=DUAL_STACK)
        ours = yield self.start_our_twistd_server(
            extra_args=DUAL_STACK + list(our_args))
        theirs = yield self.welcome_from(ref, host, headers)
        mine = yield self.welcome_from(ours, host, headers)
        return theirs, mine

    @defer.inlineCallbacks
    def assert_told_own_address(self, host, family, address):
        """Both servers tell a client over ``host`` its ``address`` under
        ``family`` and the port its connection came from."""
        (ref_w, ref_me), (our_w, our_me) = yield self.both(host)
        for welcome, me in ((ref_w, ref_me), (our_w, our_me)):
            self.assertEqual(welcome["your-address"],
                             {family: address, "port": me[1]})

    def test_ipv4_client(self):
        """A client on 127.0.0.1 (v4-mapped on a dual-stack socket) is told
        ``{"ipv4": "127.0.0.1", "port": ITS_PORT}`` by both servers."""
        return self.assert_told_own_address("127.0.0.1", "ipv4", "127.0.0.1")

    def test_ipv6_client(self):
        """A client on ::1 is told ``{"ipv6": "::1", "port": ITS_PORT}``."""
        return self.assert_told_own_address("[::1]", "ipv6", "::1")

    @defer.inlineCallbacks
    def test_proxy_headers_when_trusted(self):
        """Behind a reverse proxy that sets X-Real-IP/X-Real-Port, ours
        with --trust-x-real-ip says what the reference says (which always
        believes the headers)."""
        (ref_w, _), (our_w, _) = yield self.both(
            "127.0.0.1", PROXY_HEADERS, ["--trust-x-real-ip"])
        expected = {"ipv4": "203.0.113.7", "port": 40001}
        self.assertEqual(ref_w["your-address"], expected)
        self.assertEqual(our_w["your-address"], expected)

    @defer.inlineCallbacks
    def test_proxy_headers_ignored_by_default(self):
        """Deliberate difference (docs/server.md): unless the operator says
        a proxy sets them, ours ignores the headers (anyone can send them)
        and names the connection's own peer."""
        (ref_w, _), (our_w, our_me) = yield self.both(
            "127.0.0.1", PROXY_HEADERS)
        self.assertEqual(ref_w["your-address"]["ipv4"], "203.0.113.7")
        self.assertEqual(our_w["your-address"],
                         {"ipv4": "127.0.0.1", "port": our_me[1]})
