"""Proxy URLs, their redaction, the environment's choice and NO_PROXY
(docs/proxy.md, "Which proxy", "NO_PROXY", "Credentials")."""
from twisted.trial import unittest

from wormhole.proxy import (
    NoProxy,
    ProxyURL,
    ProxyURLError,
    parse_proxy_url,
    proxy_from_environment,
    redact_url,
)


class Parse(unittest.TestCase):

    def test_schemes_and_default_ports(self):
        for text, scheme, port in [("http://p.example", "http", 8080),
                                   ("https://p.example", "https", 443),
                                   ("socks5://p.example", "socks5", 1080),
                                   ("SOCKS5H://p.example:9050", "socks5h", 9050),
                                   ("p.example:3128", "http", 3128)]:
            url = parse_proxy_url(text)
            self.assertEqual((url.scheme, url.host, url.port), (scheme, "p.example", port))
            self.assertIsNone(url.username)
            self.assertIsNone(url.password)

    def test_credentials_are_unquoted(self):
        url = parse_proxy_url("http://al%40ice:p%3Ass%2Fw@10.0.0.1:3128/")
        self.assertEqual((url.username, url.password, url.host, url.port),
                         ("al@ice", "p:ss/w", "10.0.0.1", 3128))
        self.assertTrue(url.redacted.startswith("http://al@ice:***@10.0.0.1:3128"))

    def test_ipv6_host(self):
        url = parse_proxy_url("socks5://[::1]:1080")
        self.assertEqual(url.host, "::1")
        self.assertEqual(str(url), "socks5://[::1]:1080")

    def test_refused(self):
        for text, words in [("", "empty"), ("ftp://p.example", "scheme must be one of"),
                            ("http://", "no host"), ("http://p.example/path", "no path"),
                            ("http://p.example:99999", "bad proxy URL"),
                            ("socks5://u:" + "x" * 256 + "@p", "at most 255 bytes")]:
            with self.assertRaises(ProxyURLError) as c:
                parse_proxy_url(text)
            self.assertIn(words, str(c.exception))

    def test_refusal_never_shows_the_password(self):
        for text in ["ftp://alice:s3cret@p.example", "http://alice:s3cret@p.example/x",
                     "http://alice:s3cret@p.example:notaport"]:
            with self.assertRaises(ProxyURLError) as c:
                parse_proxy_url(text)
            self.assertNotIn("s3cret", str(c.exception))
            self.assertIn("alice:***@", str(c.exception))


class Redaction(unittest.TestCase):

    def test_str_repr_redacted_hide_the_password(self):
        url = parse_proxy_url("socks5://alice:s3cret@p.example:1080")
        for shown in (str(url), repr(url), url.redacted, f"{url}", repr([url])):
            self.assertNotIn("s3cret", shown)
            self.assertIn("alice:***@p.example:1080", shown)

    def test_user_without_password_is_shown(self):
        self.assertEqual(str(parse_proxy_url("http://alice@p.example:1")),
                         "http://alice@p.example:1")

    def test_with_password(self):
        url = parse_proxy_url("http://alice@p.example:1").with_password("s3cret")
        self.assertEqual(url.password, "s3cret")
        self.assertNotIn("s3cret", repr(url))

    def test_equality_ignores_the_password(self):
        # a password compared in == would leak through a test failure's text
        self.assertEqual(ProxyURL("http", "h", 1, "u", "a"), ProxyURL("http", "h", 1, "u", "b"))

    def test_redact_url(self):
        self.assertEqual(redact_url("http://bob:pw@h:1/x"), "http://bob:***@h:1/x")
        self.assertEqual(redact_url("bob:pw@h:1"), "bob:***@h:1")
        self.assertEqual(redact_url("http://h:1/x"), "http://h:1/x")
        self.assertEqual(redact_url("http://bob@h:1"), "http://bob@h:1")


class Environment(unittest.TestCase):

    def test_none(self):
        self.assertIsNone(proxy_from_environment({}))
        self.assertIsNone(proxy_from_environment({"HTTPS_PROXY": "  "}))

    def test_order(self):
        env = {"HTTP_PROXY": "http://h1:1", "ALL_PROXY": "socks5://h2:2",
               "HTTPS_PROXY": "http://h3:3"}
        self.assertEqual(proxy_from_environment(env).host, "h3")
        del env["HTTPS_PROXY"]
        self.assertEqual(proxy_from_environment(env).host, "h2")
        del env["ALL_PROXY"]
        self.assertEqual(proxy_from_environment(env).host, "h1")

    def test_lower_case_first(self):
        env = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1"}
        self.assertEqual(proxy_from_environment(env).host, "lower")

    def test_bad_value_names_the_variable_not_the_password(self):
        with self.assertRaises(ProxyURLError) as c:
            proxy_from_environment({"ALL_PROXY": "gopher://u:s3cret@h"})
        self.assertIn("$ALL_PROXY", str(c.exception))
        self.assertNotIn("s3cret", str(c.exception))


class NoProxyMatching(unittest.TestCase):

    def test_names_and_domains(self):
        n = NoProxy.parse("example.com, .corp.example, *.lan,localhost")
        for host in ["example.com", "a.example.com", "EXAMPLE.com.", "corp.example",
                     "x.corp.example", "printer.lan", "localhost"]:
            self.assertTrue(n.matches(host), host)
        for host in ["badexample.com", "example.org", "lan.example", "localhost2"]:
            self.assertFalse(n.matches(host), host)

    def test_addresses_and_cidrs(self):
        n = NoProxy.parse("10.0.0.0/8 192.0.2.7 ::1 [fd00::]/8 198.51.100.1:8080")
        for host in ["10.1.2.3", "192.0.2.7", "::1", "[::1]", "fd12::5", "198.51.100.1"]:
            self.assertTrue(n.matches(host), host)
        for host in ["11.0.0.1", "192.0.2.8", "::2", "fe80::1", "ten.example"]:
            self.assertFalse(n.matches(host), host)

    def test_star_and_empty(self):
        self.assertTrue(NoProxy.parse("*").matches("anything.example"))
        self.assertFalse(NoProxy.parse("").matches("anything.example"))
        self.assertFalse(NoProxy.parse(" , ,"))
        self.assertFalse(NoProxy())

    def test_from_environment(self):
        self.assertTrue(NoProxy.from_environment({"NO_PROXY": "h.example"}).matches("h.example"))
        self.assertTrue(NoProxy.from_environment({"no_proxy": "h.example",
                                                  "NO_PROXY": "x"}).matches("h.example"))
        self.assertFalse(NoProxy.from_environment({}).matches("h.example"))
