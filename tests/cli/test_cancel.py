"""A side that stops on purpose tells its peer at once
(docs/cli.md, "Ctrl-C and SIGTERM"): SIGINT of the sender or of the
receiver, mid-file and while the receiver's human is asked ``ok? (Y/n)``;
the peer exits within 5 s (measured from the signal, not slept) with
"cancelled" in its one ERROR line, and the interrupted side exits 130
(128 + SIGINT). Real ``wormhole`` processes against our Mailbox server;
mid-file, the bytes go relay-only through a gate that holds the file at
half its size, so the signal comes mid-file without timing (``_gate``).

transfer-v2 in all four cases, and classic at the question, hear it in the
mailbox (the spec's ``error``); classic mid-file has no open mailbox left
(both sides closed it after the ``file_ack``,
File-transfer protocol, "Transit"), so the interrupted side says it over
the Transit connection (``wormhole.transfer._cancel``;
docs/cli.md "Ctrl-C and SIGTERM")."""
import os
import time

from twisted.internet import defer
from twisted.trial import unittest

from ._gated import BOUND, CLASSIC, SIZE, V2, GatedPair, interrupt_ours


class Cancel(GatedPair, unittest.TestCase):
    timeout = 90

    @defer.inlineCallbacks
    def interrupt(self, victim, peer, signal="INT", release=False):
        """``signal`` to ``victim``: fires with the peer's ERROR line, once
        it ended within BOUND seconds of the signal. ``release``: the gate
        lets the bytes go on once the signal is sent (a classic sender
        says "cancelled" behind the file records it has written: a real
        network carries them; the held gate would not)."""
        signalled = time.monotonic()
        victim.transport.signalProcess(signal)
        if release:
            self.gate.release()
        yield peer.ended
        seconds = time.monotonic() - signalled
        yield victim.ended
        self.assertEqual(victim.status, 130 if signal == "INT" else 143, victim.describe())
        self.assertEqual(peer.status, 1, peer.describe())
        self.assertNotIn(b"Traceback", victim.stderr + peer.stderr,
                         victim.describe() + peer.describe())
        errors = [line for line in peer.stderr.decode().splitlines()
                  if line.startswith("ERROR")]
        self.assertEqual(len(errors), 1, peer.describe())
        self.assertLess(seconds, BOUND, peer.describe())
        self.assertNotIn("big.bin", os.listdir(self.out))
        return errors[0]

    def assertCancelled(self, line, who, how="Ctrl-C"):
        self.assertEqual(line, f"ERROR: the {who} cancelled the transfer ({how})")

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

    def assertNothingKept(self):
        """A classic receive keeps no partial: its hidden temporary file
        is removed, as before (only transfer-v2 keeps one to resume)."""
        self.assertEqual(os.listdir(self.out), [])

    @defer.inlineCallbacks
    def test_sender_mid_file_classic(self):
        """The empty record and the reason, behind the file records."""
        yield self.start("47-cancel", CLASSIC, accept=True)
        line = yield self.interrupt(self.send, self.recv, release=True)
        self.assertCancelled(line, "sender")
        self.assertNothingKept()

    @defer.inlineCallbacks
    def test_receiver_mid_file_classic(self):
        """``{"error": ...}`` in place of the final ack."""
        yield self.start("48-cancel", CLASSIC, accept=True)
        self.assertCancelled((yield self.interrupt(self.recv, self.send)), "receiver")
        self.assertNothingKept()

    @defer.inlineCallbacks
    def test_sender_sigterm_mid_file_classic(self):
        yield self.start("49-cancel", CLASSIC, accept=True)
        line = yield self.interrupt(self.send, self.recv, signal="TERM", release=True)
        self.assertCancelled(line, "sender", "SIGTERM")
        self.assertNothingKept()

    @defer.inlineCallbacks
    def test_receiver_sigterm_mid_file_classic(self):
        yield self.start("50-cancel", CLASSIC, accept=True)
        line = yield self.interrupt(self.recv, self.send, signal="TERM")
        self.assertCancelled(line, "receiver", "SIGTERM")
        self.assertNothingKept()


class WithReference(GatedPair, unittest.TestCase):
    """Classic mid-file against the reference 0.24: what ours tells it
    over Transit stays a plain failure on its side (docs/transfer.md
    "Cancelling"), within the same bound, and nothing lands under the
    final name."""
    timeout = 90

    def interrupt_ours(self, ours, theirs, release=False):
        return interrupt_ours(self, ours, theirs, self.out,
                              self.gate.release if release else None)

    @defer.inlineCallbacks
    def test_our_sender_to_the_reference(self):
        """The empty record and the reason: the reference receiver takes
        them as file bytes, then the close before the announced size."""
        yield self.start("51-cancel", CLASSIC, accept=True, reference="receiver")
        err = yield self.interrupt_ours(self.send, self.recv, release=True)
        # what the reference says for any close mid-file (its traceback)
        self.assertIn("twisted.internet.error.ConnectionClosed", err)
        # the file it never renamed ends with the reason, short of the size
        with open(os.path.join(self.out, "big.bin.tmp"), "rb") as f:
            kept = f.read()
        self.assertTrue(kept.endswith(b"transfer cancelled (Ctrl-C)"), kept[-40:])
        self.assertLess(len(kept), SIZE)

    @defer.inlineCallbacks
    def test_our_receiver_to_the_reference(self):
        """``{"error": ...}`` in place of the ack: the reference sender,
        still sending, sees the connection close."""
        yield self.start("52-cancel", CLASSIC, accept=True, reference="sender")
        err = yield self.interrupt_ours(self.recv, self.send)
        # what the reference says for any close mid-file (its traceback)
        self.assertIn("ERROR: Consumer asked us to stop producing", err)


class Bounded(GatedPair, unittest.TestCase):
    """Every wait of a transfer-v2 sender, closing included, is bounded by
    --peer-timeout (docs/cli.md, "Options"), and a signal exits non-zero."""
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
