"""What --lan changes in the command's words (docs/lan.md; docs/cli.md,
"On a local network")."""
from click.testing import CliRunner
from twisted.trial import unittest

from wormhole import errors
from wormhole.cli import _announce, _lan, cli, cmd_receive, cmd_send, cmd_share
from wormhole.cli._config import Config
from wormhole.cli._failures import describe_error


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
