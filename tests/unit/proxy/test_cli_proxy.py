"""The CLI's proxy options (docs/proxy.md, "The command line", "Tor"),
in memory through click: where the proxy comes from, what is a usage
error (exit 2), and the password asked for at the terminal."""
from click.testing import CliRunner
from twisted.trial import unittest

from wormhole.cli import cli
from wormhole.cli._proxy_options import settle

CLEAN = {name: None for name in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                                 "http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY")}


class Options(unittest.TestCase):

    def invoke(self, *args, env=None):
        self.calls = []
        return CliRunner().invoke(
            cli.wormhole, list(args), env={**CLEAN, **(env or {})},
            obj={"dispatch": lambda command, cfg: self.calls.append(cfg)})

    def assertUsageError(self, result, words):
        self.assertEqual(result.exit_code, 2, result.output)
        self.assertIn(f"Error: {words}", result.output)
        self.assertEqual(self.calls, [])

    def test_before_and_after_the_command(self):
        for args in (["--proxy", "socks5://127.0.0.1:1080", "send", "--text", "x"],
                     ["send", "--proxy", "socks5://127.0.0.1:1080", "--text", "x"],
                     ["receive", "--proxy", "socks5://127.0.0.1:1080"],
                     ["share", "--proxy", "socks5://127.0.0.1:1080", "."],
                     ["ssh", "invite", "--proxy", "socks5://127.0.0.1:1080"]):
            result = self.invoke(*args)
            self.assertEqual(result.exit_code, 0, (args, result.output))
            [cfg] = self.calls
            self.assertEqual(str(cfg.proxy_url), "socks5://127.0.0.1:1080", args)
            self.assertFalse(cfg.proxy_direct)

    def test_environment(self):
        self.invoke("send", "--text", "x", env={"HTTPS_PROXY": "http://p.example:3128",
                                                "NO_PROXY": "mailbox.example"})
        [cfg] = self.calls
        self.assertEqual(str(cfg.proxy_url), "http://p.example:3128")
        self.assertTrue(cfg.no_proxy.matches("mailbox.example"))

    def test_no_proxy_overrides_the_environment(self):
        self.invoke("send", "--no-proxy", "--text", "x", env={"ALL_PROXY": "socks5://p:1"})
        [cfg] = self.calls
        self.assertIsNone(cfg.proxy_url)

    def test_none(self):
        self.invoke("send", "--text", "x")
        [cfg] = self.calls
        self.assertIsNone(cfg.proxy_url)

    def test_proxy_direct(self):
        self.invoke("send", "--proxy", "socks5://p:1", "--proxy-direct", "--text", "x")
        [cfg] = self.calls
        self.assertTrue(cfg.proxy_direct)

    def test_tor_and_proxy_exclude_each_other(self):
        self.assertUsageError(self.invoke("send", "--tor", "--proxy", "socks5://p:1",
                                          "--text", "x"),
                              "--proxy and --tor exclude each other")
        self.assertUsageError(self.invoke("--proxy", "http://p:1", "receive", "--launch-tor"),
                              "--proxy and --tor exclude each other")

    def test_tor_ignores_a_proxy_from_the_environment(self):
        self.invoke("send", "--tor", "--text", "x", env={"HTTPS_PROXY": "http://p:1"})
        [cfg] = self.calls
        self.assertIsNone(cfg.proxy_url)

    def test_usage_errors(self):
        self.assertUsageError(self.invoke("send", "--proxy", "ftp://u:s3cret@p", "--text", "x"),
                              "bad proxy URL ftp://u:***@p")
        result = self.invoke("send", "--proxy", "ftp://u:s3cret@p", "--text", "x")
        self.assertNotIn("s3cret", result.output)
        self.assertUsageError(self.invoke("send", "--proxy", "http://p:1", "--no-proxy",
                                          "--text", "x"),
                              "--proxy and --no-proxy exclude each other")
        self.assertUsageError(self.invoke("send", "--proxy-direct", "--text", "x"),
                              "--proxy-direct needs a proxy")
        self.assertUsageError(self.invoke("send", "--proxy-ask-password", "--text", "x"),
                              "--proxy-ask-password needs a proxy")
        self.assertUsageError(self.invoke("send", "--text", "x",
                                          env={"ALL_PROXY": "gopher://u:s3cret@p"}),
                              "$ALL_PROXY: bad proxy URL gopher://u:***@p")


class _Ctx:
    def __init__(self, **given):
        self.meta = {"wormhole.proxy": given}


class _Cfg:
    tor = False


class AskPassword(unittest.TestCase):

    def test_password_asked_hidden(self):
        asked = []

        def ask(prompt, hide):
            asked.append((prompt, hide))
            return "s3cret"
        cfg = _Cfg()
        settle(_Ctx(proxy="http://alice@p:1", proxy_ask_password=True), cfg, environ={},
               ask=ask)
        self.assertEqual(asked, [("Password for the proxy http://alice@p:1", True)])
        self.assertEqual(cfg.proxy_url.password, "s3cret")
        self.assertNotIn("s3cret", repr(cfg.proxy_url))

    def test_user_asked_too(self):
        answers = iter(["bob", "s3cret"])
        asked = []

        def ask(prompt, hide):
            asked.append((prompt, hide))
            return next(answers)
        cfg = _Cfg()
        settle(_Ctx(proxy="socks5://p:1", proxy_ask_password=True), cfg, environ={}, ask=ask)
        self.assertEqual(asked, [("User name for the proxy socks5://p:1", False),
                                 ("Password for the proxy socks5://bob@p:1", True)])
        self.assertEqual((cfg.proxy_url.username, cfg.proxy_url.password), ("bob", "s3cret"))
