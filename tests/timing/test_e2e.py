"""Real transfers with ``--dump-timing`` on both sides, rendered by
misc/dump-timing.py (docs/timing.md, "Tests"): every phase appears, in
protocol order, with a non-negative duration.

Our CLI processes (and, in one test, the reference CLI as a subprocess
from its own venv, never imported) against our Mailbox server in-process
on 127.0.0.1."""
import json

from twisted.internet import defer
from twisted.trial import unittest

from tests.cli._support import ref_wormhole

from ._support import NO_TRANSIT, TimedTransfers

TEXT_PHASES = ["connect", "allocate/claim", "PAKE", "version", "transfer", "close"]


class TextTransfer(TimedTransfers, unittest.TestCase):

    @defer.inlineCallbacks
    def test_ours_both_sides(self):
        """Our sender and receiver, each with --dump-timing: the bundles
        say who wrote them (role, side) and the version milestone; the
        timeline has both clients' text-mode phases in order (the classic
        protocol's: --classic, or two of ours would use transfer-v2)."""
        sb, rb = self.path("sender.json"), self.path("receiver.json")
        send = self.spawn(self.ours("--dump-timing", sb, "send", "--classic", "--code",
                                    "7-ab-cd", "--text", "timed"), "sender")
        yield send.wait_for(rb"Wormhole code is")  # the receiver comes second
        recv = self.spawn(self.ours("--dump-timing", rb, "receive", "--classic", "7-ab-cd"),
                          "receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.assertEqual(recv.stdout, b"timed\n")
        sides = {}
        for fn, role in ((sb, "sender"), (rb, "receiver")):
            with open(fn) as f:
                events = json.load(f)
            names = [ev["name"] for ev in events]
            self.assertIn("got version", names)
            self.assertIn("got verifier", names)
            self.assertIn({"role": role}, [ev["details"] for ev in events
                                           if ev["name"] == "command"])
            sides[role] = [ev["details"]["side"] for ev in events
                           if ev["name"] == "wormhole"][0]
        self.assertNotEqual(sides["sender"], sides["receiver"])
        phases = yield self.render(rb, sb)  # order of the files does not matter
        self.assertEqual(sorted(phases), ["receiver", "sender"])
        self.assertPhases(phases, "sender", TEXT_PHASES)
        self.assertPhases(phases, "receiver", TEXT_PHASES)
        # the receiver started after the sender had shown its code
        self.assertLess(phases["sender"][0][1], phases["receiver"][0][1])
        for side in sides.values():
            self.assertIn(f"side {side}", self.html)

    @defer.inlineCallbacks
    def test_reference_sender_bundle(self):
        """The reference's bundle (same JSON shape) renders beside ours: its
        role and side are found without our identity events."""
        sb, rb = self.path("ref-sender.json"), self.path("receiver.json")
        send = self.spawn([ref_wormhole(), "--relay-url", self.srv.url,
                           "--transit-helper", NO_TRANSIT, "--dump-timing", sb,
                           "send", "--no-qr", "--no-listen", "--code", "8-ab-cd",
                           "--text", "timed"], "reference sender")
        recv = self.spawn(self.ours("--dump-timing", rb, "receive", "8-ab-cd"), "receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        phases = yield self.render(sb, rb)
        self.assertPhases(phases, "sender", TEXT_PHASES)
        self.assertPhases(phases, "receiver", TEXT_PHASES)
