"""Options and arguments that cannot go together are usage errors (exit
2, docs/cli.md "Exit status") instead of one being silently ignored:
``wormhole receive``'s, as the reference refuses most of them, and
``send --text`` with paths; in memory, through click."""
from click.testing import CliRunner
from twisted.trial import unittest

from wormhole.cli import cli


class _Usage:
    command = None

    def invoke(self, *args):
        self.calls = []
        return CliRunner().invoke(
            cli.wormhole, [self.command, *args], env={},
            obj={"dispatch": lambda command, cfg: self.calls.append(cfg)})

    def assertUsageError(self, result, words):
        self.assertEqual(result.exit_code, 2, result.output)
        self.assertIn(f"Error: {words}", result.output)
        self.assertEqual(self.calls, [])


class ReceiveUsage(_Usage, unittest.TestCase):
    command = "receive"

    def test_code_with_allocate(self):
        """A CODE with --allocate (which makes one): the code was used and
        --allocate ignored."""
        self.assertUsageError(self.invoke("--allocate", "7-a-b"),
                              "--allocate makes a new code: give no CODE with it")

    def test_code_length_without_allocate(self):
        """-c without --allocate counts nothing (a typed code has its own)."""
        self.assertUsageError(self.invoke("-c", "3", "7-a-b"),
                              "-c/--code-length counts the words of a code made with "
                              "--allocate")
        self.assertUsageError(self.invoke("--code-length", "3"), "-c/--code-length")

    def test_zeromode_with_allocate(self):
        self.assertUsageError(self.invoke("-0", "--allocate"),
                              "-0 and --allocate cannot be used together")

    def test_allocate_with_code_length(self):
        """Together they are what -c is for."""
        result = self.invoke("--allocate", "-c", "3")
        self.assertEqual(result.exit_code, 0, result.output)
        [cfg] = self.calls
        self.assertEqual((cfg.allocate, cfg.code_length, cfg.code), (True, 3, None))

    def test_plain_code_and_prompt(self):
        """A code, or none (asked for), with the default length: fine."""
        for args, code in ((["7-a-b"], "7-a-b"), ([], None)):
            result = self.invoke(*args)
            self.assertEqual(result.exit_code, 0, result.output)
            self.assertEqual([c.code for c in self.calls], [code])


class SendUsage(_Usage, unittest.TestCase):
    command = "send"

    def test_text_with_paths(self):
        """--text and a PATH: the path would be left out, unsaid (the
        reference sends the text alone)."""
        self.assertUsageError(self.invoke("--text", "hi", "a.txt"),
                              "--text sends a text message: give no PATH with it")

    def test_text_or_paths(self):
        for args, (text, paths) in ((["--text", "hi"], ("hi", ())),
                                    (["a", "b"], (None, ("a", "b")))):
            result = self.invoke(*args)
            self.assertEqual(result.exit_code, 0, result.output)
            [cfg] = self.calls
            self.assertEqual((cfg.text, tuple(cfg.paths)), (text, paths))
