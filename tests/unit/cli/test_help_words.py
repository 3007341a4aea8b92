"""What ``--help`` says of the options whose reference words do not
match what they do here (docs/cli.md, "Options"): in memory, through
click."""
import re

from click.testing import CliRunner
from twisted.trial import unittest

from wormhole.cli import cli


def help_of(*command):
    result = CliRunner().invoke(cli.wormhole, [*command, "--help"], obj={})
    assert result.exit_code == 0, result.output
    return re.sub(r"\s+", " ", result.output)  # click wraps the columns


class HelpWords(unittest.TestCase):

    def test_code_length_counts_words(self):
        """-c counts words (the reference says "bytes/words")."""
        for command in (["send"], ["receive"], ["share"], ["ssh", "invite"]):
            text = help_of(*command)
            self.assertIn("number of words in an allocated code", text, command)
            self.assertNotIn("bytes/words", text, command)

    def test_ignore_unsendable_files_skips(self):
        """It skips what a directory holds that cannot be sent (it raises
        no error about unreadable files, as the reference's words said)."""
        text = help_of("send")
        self.assertIn("--ignore-unsendable-files skip, with a warning, what cannot be sent "
                      "in a directory", text)

    def test_no_listen_says_what_it_does(self):
        """Not "(debug)", and for transfer-v2 too: no port, no address."""
        for command in (["send"], ["receive"], ["share"]):
            text = help_of(*command)
            self.assertIn("--no-listen: open no port for direct connections and offer no "
                          "address of ours", text, command)

    def test_verify_on_the_receiver_only_shows(self):
        """The receiver shows the verifier, the sender asks (docs/cli.md):
        receive's --verify does not promise to wait for approval."""
        self.assertIn("-v, --verify display verification string (and wait for approval)",
                      help_of("send"))
        self.assertIn("-v, --verify display verification string (and wait for approval)",
                      help_of("share"))
        text = help_of("receive")
        self.assertIn("-v, --verify display verification string (the sender asks for "
                      "approval)", text)
        self.assertNotIn("wait for approval", text)

    def test_receive_takes_one_code(self):
        """Usage shows one CODE (several words are refused: a usage error)."""
        text = help_of("receive")
        self.assertIn("Usage: wormhole receive [OPTIONS] [CODE] ", text)
        self.assertNotIn("[CODE]...", text)
