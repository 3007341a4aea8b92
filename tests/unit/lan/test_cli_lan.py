"""What --lan changes in the command's words (docs/lan.md; docs/cli.md,
"On a local network")."""
from twisted.trial import unittest

from wormhole import errors
from wormhole.cli import _announce, _lan
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
            "wormhole --relay-url ws://10.0.0.5:4567/v1 receive 7-a-b")
