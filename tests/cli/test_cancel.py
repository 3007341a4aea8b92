"""A side that stops on purpose tells its peer at once (issue 22 item 3):
SIGINT of the sender or of the receiver, mid-file and while the
receiver's human is asked ``ok? (Y/n)``; the peer exits within 5 s
(measured from the signal, not slept) with "cancelled" in its one ERROR
line, and the interrupted side exits 130 (128 + SIGINT). Real
``wormhole`` processes against our Mailbox server; mid-file, the bytes go
relay-only through a gate that holds the file at half its size, so the
signal comes mid-file without timing (``_gate``).

transfer-v2 in all four cases. Classic at the question (the wormhole is
still open there, so the peer reads the ``error`` message); classic
mid-file has no open mailbox left (both sides closed it after the
``file_ack``, spec 004 9.3), and the peer reports within the same bound
that the connection closed (docs/cli.md "Ctrl-C and SIGTERM")."""
import os
import re
import time

from twisted.internet import defer
from twisted.trial import unittest

from ._gated import BOUND, CLASSIC, V2, GatedPair


class Cancel(GatedPair, unittest.TestCase):
    timeout = 90

    @defer.inlineCallbacks
    def interrupt(self, victim, peer):
        """SIGINT to ``victim``: fires with the peer's ERROR line and the
        seconds from the signal until the peer ended."""
        signalled = time.monotonic()
        victim.transport.signalProcess("INT")
        yield peer.ended
        seconds = time.monotonic() - signalled
        yield victim.ended
        self.assertEqual(victim.status, 130, victim.describe())
        self.assertEqual(peer.status, 1, peer.describe())
        self.assertNotIn(b"Traceback", victim.stderr + peer.stderr,
                         victim.describe() + peer.describe())
        errors = [line for line in peer.stderr.decode().splitlines()
                  if line.startswith("ERROR")]
        self.assertEqual(len(errors), 1, peer.describe())
        self.assertLess(seconds, BOUND, peer.describe())
        self.assertNotIn("big.bin", os.listdir(self.out))
        return errors[0]

    def assertCancelled(self, line, who):
        self.assertEqual(line, f"ERROR: the {who} cancelled the transfer (Ctrl-C)")

    @defer.inlineCallbacks
    def test_sender_mid_file_transfer_v2(self):
        yield self.start("41-cancel", V2, accept=True)
        self.assertCancelled((yield self.interrupt(self.send, self.recv)), "sender")

    @defer.inlineCallbacks
    def test_receiver_mid_file_transfer_v2(self):
        yield self.start("42-cancel", V2, accept=True)
        self.assertCancelled((yield self.interrupt(self.recv, self.send)), "receiver")

    @defer.inlineCallbacks
    def test_sender_at_the_prompt_transfer_v2(self):
        yield self.start("43-cancel", V2, accept=False)
        self.assertCancelled((yield self.interrupt(self.send, self.recv)), "sender")

    @defer.inlineCallbacks
    def test_receiver_at_the_prompt_transfer_v2(self):
        yield self.start("44-cancel", V2, accept=False)
        self.assertCancelled((yield self.interrupt(self.recv, self.send)), "receiver")

    @defer.inlineCallbacks
    def test_sender_at_the_prompt_classic(self):
        yield self.start("45-cancel", CLASSIC, accept=False)
        self.assertCancelled((yield self.interrupt(self.send, self.recv)), "sender")

    @defer.inlineCallbacks
    def test_receiver_at_the_prompt_classic(self):
        yield self.start("46-cancel", CLASSIC, accept=False)
        self.assertCancelled((yield self.interrupt(self.recv, self.send)), "receiver")

    @defer.inlineCallbacks
    def test_sender_mid_file_classic(self):
        """The receiver hears the Transit connection close (through the
        gate, released once the sender is gone)."""
        yield self.start("47-cancel", CLASSIC, accept=True)
        self.send.transport.signalProcess("INT")
        yield self.send.ended
        signalled = time.monotonic()
        self.gate.drain()
        yield self.recv.ended
        self.assertLess(time.monotonic() - signalled, BOUND, self.recv.describe())
        self.assertEqual((self.send.status, self.recv.status), (130, 1))
        self.assertRegex(self.recv.stderr.decode(),
                         r"ERROR: the sender closed the connection after [\d.]+ MB of 16\.0 MB")

    @defer.inlineCallbacks
    def test_receiver_mid_file_classic(self):
        yield self.start("48-cancel", CLASSIC, accept=True)
        line = yield self.interrupt(self.recv, self.send)
        self.assertTrue(re.match(r"ERROR: the receiver closed the connection after ", line), line)


class Bounded(GatedPair, unittest.TestCase):
    """issue 21 item 4: every wait of a transfer-v2 sender, closing
    included, is bounded by --peer-timeout, and a signal exits non-zero."""
    timeout = 120

    @defer.inlineCallbacks
    def test_a_receiver_that_stops_taking_the_data(self):
        """The gate takes nothing more (a receiver that accepted and stopped
        reading): the sender gives up after --peer-timeout (3 s), and its
        closing waits no longer than that for the peer's CLOSE, not
        Dilation's 300 s; well under the 60 s an unreachable peer gets."""
        yield self.start("55-stall", ["--peer-timeout", "3"], accept=True)
        held = time.monotonic()
        yield self.send.ended
        self.assertLess(time.monotonic() - held, 30, self.send.describe())
        self.assertEqual(self.send.status, 1, self.send.describe())
        self.assertRegex(self.send.stderr.decode(),
                         r"ERROR: the receiver went away after .* \(offer cancelled: gave up "
                         r"waiting for the receiver to take or acknowledge the data: nothing "
                         r"came for 3 seconds \(--peer-timeout\)\)")

    @defer.inlineCallbacks
    def test_sigterm_exits_143(self):
        yield self.start("56-term", V2, accept=True)
        self.send.transport.signalProcess("TERM")
        yield defer.gatherResults([self.send.ended, self.recv.ended])
        self.assertEqual((self.send.status, self.recv.status), (143, 1),
                         self.send.describe() + self.recv.describe())
        self.assertIn(b"ERROR: the sender cancelled the transfer (SIGTERM)", self.recv.stderr)
