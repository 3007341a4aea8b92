"""The two handshakes, sans-I/O, against proxy answers written out byte
by byte (RFC 1928, RFC 1929; RFC 9110 "CONNECT"): what we send, when the
tunnel opens, and every refusal as one line naming the proxy, redacted."""
import base64

from twisted.trial import unittest

from wormhole._proxy._negotiate import HTTPConnectNegotiation, Socks5Negotiation
from wormhole.proxy import ProxyAuthError, ProxyError, ProxyRefused, parse_proxy_url

SOCKS_OK_V4 = b"\x05\x00\x00\x01\x7f\x00\x00\x01\x04\x38"


def socks(url="socks5://127.0.0.1:1080", host="relay.example", port=4001):
    return Socks5Negotiation(parse_proxy_url(url), host, port)


class Socks5(unittest.TestCase):

    def test_no_authentication(self):
        n = socks()
        self.assertEqual(n.start().to_send, b"\x05\x01\x00")
        step = n.feed(b"\x05\x00")
        # CONNECT, the name handed over (ATYP 3), port 4001
        self.assertEqual(step.to_send, b"\x05\x01\x00\x03\x0drelay.example\x0f\xa1")
        self.assertFalse(step.open)
        step = n.feed(SOCKS_OK_V4 + b"early")
        self.assertTrue(step.open)
        self.assertEqual(step.leftover, b"early")

    def test_answers_in_pieces(self):
        n = socks(host="::1", port=80)
        n.start()
        self.assertEqual(n.feed(b"\x05").to_send, b"")
        self.assertEqual(n.feed(b"\x00").to_send, b"\x05\x01\x00\x04" + b"\x00" * 15 + b"\x01"
                         + b"\x00\x50")
        # an IPv6 answer, then a domain-name answer's length, byte by byte
        answer = b"\x05\x00\x00\x04" + b"\x00" * 16 + b"\x00\x50"
        for b in answer[:-1]:
            self.assertFalse(n.feed(bytes([b])).open)
        self.assertTrue(n.feed(answer[-1:]).open)

    def test_domain_answer(self):
        n = socks()
        n.start()
        n.feed(b"\x05\x00")
        self.assertTrue(n.feed(b"\x05\x00\x00\x03\x03abc\x00\x01").open)

    def test_username_password(self):
        n = socks("socks5://alice:s3cret@127.0.0.1:1080")
        self.assertEqual(n.start().to_send, b"\x05\x02\x00\x02")
        self.assertEqual(n.feed(b"\x05\x02").to_send, b"\x01\x05alice\x06s3cret")
        self.assertEqual(n.feed(b"\x01\x00").to_send[:4], b"\x05\x01\x00\x03")
        self.assertTrue(n.feed(SOCKS_OK_V4).open)

    def test_wrong_password(self):
        n = socks("socks5://alice:s3cret@127.0.0.1:1080")
        n.start()
        n.feed(b"\x05\x02")
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"\x01\x01")
        self.assertEqual(str(c.exception), "the SOCKS5 proxy socks5://alice:***@127.0.0.1:1080 "
                         "refused the user name and password")

    def test_password_wanted_but_none_given(self):
        n = socks()
        n.start()
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"\x05\xff")
        self.assertIn("wants a user name and password", str(c.exception))

    def test_no_acceptable_method(self):
        n = socks("socks5://alice:s3cret@127.0.0.1:1080")
        n.start()
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"\x05\xff")
        self.assertIn("accepts none of the ways we can log in", str(c.exception))
        self.assertNotIn("s3cret", str(c.exception))

    def test_target_refused(self):
        n = socks()
        n.start()
        n.feed(b"\x05\x00")
        with self.assertRaises(ProxyRefused) as c:
            n.feed(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
        self.assertEqual(str(c.exception), "the SOCKS5 proxy socks5://127.0.0.1:1080 could not "
                         "connect to relay.example:4001: connection refused")

    def test_not_socks(self):
        n = socks()
        n.start()
        with self.assertRaises(ProxyError) as c:
            n.feed(b"HT")
        self.assertIn("not SOCKS5", str(c.exception))
        n = socks()
        n.start()
        n.feed(b"\x05\x00")
        with self.assertRaises(ProxyError):
            n.feed(b"\x05\x00\x00\x09\x00")  # no such address type


class HTTPConnect(unittest.TestCase):

    def request(self, url="http://127.0.0.1:3128", host="relay.example", port=4001):
        n = HTTPConnectNegotiation(parse_proxy_url(url), host, port)
        return n, n.start().to_send

    def test_request(self):
        _, sent = self.request()
        self.assertEqual(sent, b"CONNECT relay.example:4001 HTTP/1.1\r\n"
                               b"Host: relay.example:4001\r\n\r\n")
        _, sent = self.request(host="::1", port=80)
        self.assertTrue(sent.startswith(b"CONNECT [::1]:80 HTTP/1.1\r\n"))

    def test_basic_credentials(self):
        _, sent = self.request("http://alice:s3cret@127.0.0.1:3128")
        secret = base64.b64encode(b"alice:s3cret")
        self.assertIn(b"Proxy-Authorization: Basic " + secret + b"\r\n", sent)

    def test_established(self):
        n, _ = self.request()
        self.assertFalse(n.feed(b"HTTP/1.1 200 Connection established\r\n").open)
        step = n.feed(b"Proxy-agent: tinyproxy\r\n\r\nfirst bytes")
        self.assertTrue(step.open)
        self.assertEqual(step.leftover, b"first bytes")

    def test_informational_then_established(self):
        n, _ = self.request()
        self.assertTrue(n.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\n").open)

    def test_407(self):
        n, _ = self.request("http://alice:s3cret@127.0.0.1:3128")
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        self.assertEqual(str(c.exception), "the HTTP proxy http://alice:***@127.0.0.1:3128 "
                         "refused the user name and password (407 Proxy Authentication "
                         "Required)")

    def test_401_from_tinyproxy(self):
        n, _ = self.request("http://alice:s3cret@127.0.0.1:3128")
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"HTTP/1.1 401 Unauthorized\r\n\r\n")
        self.assertIn("refused the user name and password (401 Unauthorized)",
                      str(c.exception))

    def test_407_without_credentials(self):
        n, _ = self.request()
        with self.assertRaises(ProxyAuthError) as c:
            n.feed(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
        self.assertIn("wants a user name and password (407)", str(c.exception))

    def test_refused_reason_is_escaped(self):
        n, _ = self.request()
        with self.assertRaises(ProxyRefused) as c:
            n.feed(b"HTTP/1.1 403 No \x1b[31mway\r\n\r\n")
        self.assertNotIn("\x1b", str(c.exception))
        self.assertIn("could not connect to relay.example:4001: 403 No", str(c.exception))

    def test_not_http(self):
        n, _ = self.request()
        with self.assertRaises(ProxyError) as c:
            n.feed(b"\x05\x00garbage\r\n\r\n")
        self.assertIn("not HTTP", str(c.exception))

    def test_endless_answer_is_refused(self):
        n, _ = self.request()
        n.feed(b"HTTP/1.1 200 OK\r\n")
        with self.assertRaises(ProxyError):
            for _ in range(100):
                n.feed(b"X-Filler: " + b"a" * 1000 + b"\r\n")
