"""What --lan changes in the command's words (docs/lan.md; docs/cli.md,
"Options")."""
import io

from click.testing import CliRunner
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import errors
from wormhole.cli import _announce, _lan, cli, cmd_receive, cmd_send, cmd_share
from wormhole.cli._config import Config
from wormhole.cli._failures import describe_error
from wormhole.lan import LanError


class Words(unittest.TestCase):
    def test_an_unreachable_mailbox_suggests_lan(self):
        """Without --lan the error points at --lan; with it, not."""
        e = errors.ServerConnectionError("ws://h:1/v1", "Network is unreachable")
        self.assertTrue(describe_error(e, Config()).endswith(
            "Network is unreachable (on a local network without it: --lan)"))
        self.assertTrue(describe_error(e, Config(lan=True)).endswith(
            "Network is unreachable"))

    def test_the_receiver_is_told_to_use_lan(self):
        self.assertIn("wormhole receive --lan 7-a-b",
                      _announce.instructions(Config(lan=True), "7-a-b"))
        self.assertIn("wormhole receive 7-a-b", _announce.instructions(Config(), "7-a-b"))

    def test_the_line_for_peers_without_mdns(self):
        class Fake:
            url, nameplate = "ws://10.0.0.5:4567/v1", "7"
        self.assertEqual(
            _lan.relay_url_line(Fake(), "7-a-b"),
            "LAN Mailbox ws://10.0.0.5:4567/v1 (nameplate 7). A peer without mDNS: "
            "wormhole --relay-url ws://10.0.0.5:4567/v1 --transit-helper '' receive 7-a-b")


class Options(unittest.TestCase):
    """``--lan`` on send, receive and share (docs/cli.md, "Options")."""

    def invoke(self, args):
        self.calls = []
        return CliRunner().invoke(
            cli.wormhole, args, env={},
            obj={"dispatch": lambda command, cfg: self.calls.append((command, cfg))})

    def test_lan_wraps_the_command(self):
        """The command runs inside the LAN setup, with cfg.lan set; without
        --lan it is the command itself."""
        for args, plain in ((["send", "--lan", "--text", "x"], cmd_send.send),
                            (["receive", "--lan", "1-a-b"], cmd_receive.receive),
                            (["share", "--lan"], cmd_share.share)):
            r = self.invoke(args)
            self.assertEqual(r.exit_code, 0, r.output)
            [(command, cfg)] = self.calls
            self.assertTrue(cfg.lan, args)
            self.assertIsNot(command, plain, args)
            r = self.invoke([a for a in args if a != "--lan"])
            [(command, cfg)] = self.calls
            self.assertFalse(cfg.lan)
            self.assertIs(command, plain, args)

    def test_lan_excludes_tor_zero_and_allocate(self):
        for args in (["send", "--lan", "--tor", "--text", "x"], ["send", "--lan", "-0"],
                     ["receive", "--lan", "--allocate"], ["receive", "--lan", "-0"]):
            r = self.invoke(args)
            self.assertEqual(r.exit_code, 2, (args, r.output))
            self.assertIn("--lan cannot be used with --tor, -0 or --allocate", r.output)
            self.assertEqual(self.calls, [])


class _Reactor(Clock):
    """A Clock with the system event triggers ``with_lan`` uses."""

    def __init__(self):
        super().__init__()
        self.triggers = {}

    def addSystemEventTrigger(self, phase, event, f):  # noqa: N802 (Twisted's name)
        handle = object()
        self.triggers[handle] = (phase, event, f)
        return handle

    def removeSystemEventTrigger(self, handle):  # noqa: N802
        del self.triggers[handle]


class _FakeLan:
    url, nameplate = "ws://10.0.0.5:4567/v1", "7"

    def __init__(self, calls):
        self.calls = calls

    def make_code(self, code_length):
        return "7-" + "-".join(["word"] * code_length)

    def stop(self):
        self.calls.append("stop")
        return defer.succeed(None)


class WithLan(unittest.TestCase):
    """cli/_lan.with_lan around a command, the LAN library faked."""

    def setUp(self):
        self.calls = []
        self.reactor = _Reactor()
        self.heard = ["7"]

        def serve(reactor, nameplate=None):
            self.calls.append(("serve", nameplate))
            return defer.succeed(_FakeLan(self.calls))

        def find(reactor, nameplate):
            self.calls.append(("find", nameplate))
            return defer.succeed("ws://10.0.0.5:4567/v1")

        def nameplates(reactor):
            self.calls.append("browse")
            return defer.succeed(self.heard)
        for name, f in (("serve", serve), ("find", find), ("nameplates", nameplates)):
            self.patch(_lan, name, f)

    def run_it(self, name, cfg, fails=False):
        def command(reactor, cfg):
            self.calls.append(("command", cfg.relay_url, cfg.transit_helper, cfg.code,
                               len(self.reactor.triggers)))
            if fails:
                raise errors.TransferError("the transfer failed")
        d = _lan.with_lan(self.reactor, command, cfg, name)
        self.reactor.advance(0)
        return d

    def test_the_sender_serves_announces_and_says_goodbye(self):
        cfg = Config(lan=True, stderr=io.StringIO(), code_length=2)
        self.successResultOf(self.run_it("send", cfg))
        self.assertEqual(self.calls, [("serve", None),
                                      ("command", _FakeLan.url, None, "7-word-word", 1),
                                      "stop"])
        self.assertEqual(self.reactor.triggers, {})
        self.assertIn(f"--relay-url {_FakeLan.url} --transit-helper '' receive 7-word-word",
                      cfg.stderr.getvalue())

    def test_goodbye_after_a_failure_too(self):
        cfg = Config(lan=True, stderr=io.StringIO(), code="7-given-code")
        self.failureResultOf(self.run_it("send", cfg, fails=True), errors.TransferError)
        self.assertEqual(self.calls[0], ("serve", "7"))
        self.assertEqual(self.calls[-1], "stop")

    def test_share_without_a_code_serves_and_says_the_code(self):
        cfg = Config(lan=True, stderr=io.StringIO())
        self.successResultOf(self.run_it("share", cfg))
        self.assertEqual(self.calls[0], ("serve", None))
        self.assertIn("wormhole share --lan --code 7-word-word [PATH]...", cfg.stderr.getvalue())

    def test_the_receiver_and_share_with_a_code_find(self):
        for name in ("receive", "share"):
            self.calls = []
            cfg = Config(lan=True, code="7-a-b")
            self.successResultOf(self.run_it(name, cfg))
            self.assertEqual(self.calls, [("find", "7"),
                                          ("command", _FakeLan.url, None, "7-a-b", 0)])

    def test_no_code_the_one_sender(self):
        cfg = Config(lan=True)
        self.successResultOf(self.run_it("receive", cfg))
        self.assertEqual(self.calls[:2], ["browse", ("find", "7")])

    def test_no_code_and_no_sender_or_several(self):
        for heard, said in (([], "no sender on this network announces a wormhole code"),
                            (["3", "12"], "several senders on this network (3, 12)")):
            self.heard, self.calls = heard, []
            f = self.failureResultOf(self.run_it("receive", Config(lan=True)), LanError)
            self.assertIn(said, str(f.value))
            self.assertEqual(self.calls, ["browse"])
