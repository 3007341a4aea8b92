"""The receive side's rules as the command line and docs/security.md
state them: the --peer-timeout option, errors escaped in one place, and
the documented limits equal to the code's."""
import io
import json
import os

from click.testing import CliRunner
from twisted.trial import unittest

from wormhole import _landing
from wormhole.cli import cli, cmd_ssh
from wormhole.cli._config import Config
from wormhole.errors import ServerError, TransferError, WelcomeError
from wormhole.transfer import _unzip

from ..._paths import REPO_ROOT
from ...cli.fakes import FakeFactory, FakeReactor

DOCS = os.path.join(REPO_ROOT, "docs", "security.md")


class PeerTimeoutOption(unittest.TestCase):

    def invoke(self, args, env=None):
        calls = []
        result = CliRunner().invoke(cli.wormhole, args, env=env or {},
                                    obj={"dispatch": lambda c, cfg: calls.append(cfg)})
        return result, calls

    def test_default_option_and_env(self):
        """300 s by default (the Config's default too), --peer-timeout
        and $WORMHOLE_PEER_TIMEOUT change it; zero or less is refused."""
        r, [cfg] = self.invoke(["receive", "4-a-b"])
        self.assertEqual(cfg.peer_timeout, 300.0)
        self.assertEqual(Config().peer_timeout, 300.0)
        r, [cfg] = self.invoke(["receive", "--peer-timeout", "2.5", "4-a-b"])
        self.assertEqual(cfg.peer_timeout, 2.5)
        r, [cfg] = self.invoke(["receive", "4-a-b"], env={"WORMHOLE_PEER_TIMEOUT": "9"})
        self.assertEqual(cfg.peer_timeout, 9.0)
        r, calls = self.invoke(["receive", "--peer-timeout", "0", "4-a-b"])
        self.assertEqual((r.exit_code, calls), (2, []))


class ErrorsEscaped(unittest.TestCase):

    def test_every_error_escaped_once(self):
        """Whatever error carries peer or server text, describe_error
        shows it escaped, each control character once, in its own line."""
        cfg = Config(relay_url="ws://r/v1")
        evil = "\x1b[2J\r\nERROR: forged\u202e\\"
        shown = "\\x1b[2J\\r\\nERROR: forged\\u202e\\\\"
        for exc in (TransferError(evil), ServerError(evil), WelcomeError(evil)):
            message = cli.describe_error(exc, cfg)
            self.assertIn(shown, message)
            self.assertNotIn("\x1b", message)
            self.assertNotIn("\r", message)


class SshInvite(unittest.TestCase):

    def start(self):
        home = os.path.abspath(self.mktemp())
        os.makedirs(home)
        self.patch(os.path, "expanduser", lambda p: p.replace("~", home, 1))
        factory = FakeFactory()
        self.reactor = FakeReactor()
        self.cfg = cfg = Config(relay_url="ws://example/v1", create=factory.create,
                                stdin=io.StringIO(), stdout=io.StringIO(),
                                stderr=io.StringIO(), peer_timeout=20.0)
        d = cmd_ssh.invite(self.reactor, cfg)
        self.w = factory.wormholes[0]
        return d, cfg

    def test_peer_stalls(self):
        """Once the other side has shown up (its key), `ssh invite` waits
        for its key line no longer than the peer timeout; before that it
        waits for the human as long as it takes."""
        d, _ = self.start()
        self.reactor.advance(1000)
        self.assertNoResult(d)
        self.w.got_key()
        self.reactor.advance(20)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "gave up waiting for the peer's key: nothing "
                         "came for 20 seconds")

    def test_key_comment_escaped(self):
        """`wormhole ssh invite` receives a key whose comment carries
        escape sequences: the line it prints shows them escaped."""
        d, cfg = self.start()
        w = self.w
        w.got_key()
        w.got_verifier()
        key = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDUbZdMDkBjQEQ3Ot8b+hzr6d1ABP2M0CYNHCSY"
               "xeVSs me\x1b]0;owned\x07\u202e")
        w.deliver(json.dumps({"offer": {"message": key}}).encode())
        self.successResultOf(d)
        self.assertIn("id='me\\x1b]0;owned\\x07\\u202e'", cfg.stderr.getvalue())
        self.assertNotIn("\x1b", cfg.stderr.getvalue())


class DocumentedLimits(unittest.TestCase):

    def test_limits_in_docs_are_the_code(self):
        """docs/security.md states each limit with the value in the code."""
        with open(DOCS, encoding="utf-8") as f:
            doc = f.read()
        for text in (f"{_unzip.MAX_LINK_TARGET} bytes (`MAX_LINK_TARGET`",
                     f"{_unzip.MAX_PATH_BYTES} bytes (`MAX_PATH_BYTES`)",
                     f"{_unzip.MAX_LINK_HOPS} (`MAX_LINK_HOPS`",
                     f"plus {_unzip.MAX_EXTRA_ENTRIES} (`MAX_EXTRA_ENTRIES`",
                     f"{_unzip.MAX_CENTRAL_RECORD} bytes (`MAX_CENTRAL_RECORD`)",
                     f"at most {_landing.NAME_MAX} bytes in UTF-8",
                     f"| {Config().peer_timeout:g} s |",
                     _landing.PARTIAL_PREFIX):
            self.assertTrue(text in doc, f"docs/security.md does not say {text!r}")
