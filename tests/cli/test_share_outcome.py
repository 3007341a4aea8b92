"""``wormhole share``'s end (docs/cli.md, "Messages"): a failure of our
own offer -- the peer acknowledging it with a wrong hash -- is reported
also when the peer's offers failed too (each on its line, the ERROR line
counting both), and decides a failing status."""
import io

from twisted.internet import defer
from twisted.trial import unittest

from wormhole.cli._config import Config
from wormhole.cli.cli import EXIT_DECLINED, EXIT_FAILED, exit_status
from wormhole.cli.cmd_share import ended
from wormhole.errors import TransferError
from wormhole.transfer import Declined
from wormhole.transfer_v2 import AcknowledgeMismatch

MISMATCH = AcknowledgeMismatch(
    "the peer received different bytes: 3 bytes with hash 00, where we sent 3 bytes "
    "with hash 11")


class _Receiving:
    def __init__(self, error=None):
        self._error = error

    def finished(self):
        return defer.fail(self._error) if self._error is not None else defer.succeed(None)


class ShareEnd(unittest.TestCase):
    def end(self, theirs, ours, offered=1):
        cfg = Config(stderr=io.StringIO())
        d = ended(cfg, _Receiving(theirs), ours, offered)
        return d, cfg.stderr.getvalue()

    def test_ours_alone(self):
        d, said = self.end(None, [MISMATCH])
        self.assertIs(self.failureResultOf(d).value, MISMATCH)
        self.assertEqual(said, "")  # the ERROR line says it

    def test_ours_and_theirs(self):
        theirs = TransferError("the sender went away after 1.0 MB of 2.0 MB arrived")
        d, said = self.end(theirs, [MISMATCH])
        self.assertIn("2 of 2", str(self.failureResultOf(d).value))
        self.assertEqual(said, f"Receiving: {theirs}\nSending: {MISMATCH}\n")

    def test_ours_failed_theirs_declined_is_a_failure(self):
        d, said = self.end(Declined("transfer rejected"), [MISMATCH])
        error = self.failureResultOf(d).value
        self.assertEqual(exit_status(error), EXIT_FAILED)
        self.assertIn("different bytes", said)

    def test_both_declined(self):
        d, said = self.end(Declined("transfer rejected"), [Declined("the receiver declined")])
        self.assertEqual(exit_status(self.failureResultOf(d).value), EXIT_DECLINED)

    def test_all_well(self):
        d, said = self.end(None, [])
        self.assertIsNone(self.successResultOf(d))
        self.assertEqual(said, "")
