"""Real transfers with ``--dump-timing`` on both sides, rendered by
misc/dump-timing.py (issue 5 acceptance): every phase appears, in protocol
order, with a non-negative duration.

Our CLI processes (and, in one test, the reference CLI as a subprocess
from its own venv, never imported) against our Mailbox server in-process
on 127.0.0.1."""
import json
import os
import sys

from twisted.internet import defer, reactor, utils
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from tests.cli._process import CLIProcess, our_cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "misc", "dump-timing.py")
NO_TRANSIT = "tcp:127.0.0.1:1"  # nothing listens there: no public relay
TEXT_PHASES = ["connect", "allocate/claim", "PAKE", "version", "transfer", "close"]


def ref_wormhole():
    venv = os.environ.get("WORMHOLE_REFERENCE_VENV", os.path.join(REPO, ".venv-ref"))
    path = os.path.join(venv, "bin", "wormhole")
    if not os.path.exists(path):
        raise AssertionError(f"the reference CLI is not at {path}: run ./dev test once "
                             "(it installs the reference into .venv-ref)")
    return path


class TimedTransfers:
    """Our server in-process; spawn CLIs; render their bundles."""
    timeout = 90

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)
        self.dir = self.mktemp()
        os.mkdir(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def spawn(self, argv, name):
        return CLIProcess.spawn(self, reactor, argv, name=name)

    def ours(self, *args):
        return our_cli("--relay-url", self.srv.url, "--transit-helper", NO_TRANSIT, *args)

    @defer.inlineCallbacks
    def render(self, *bundles):
        """Run misc/dump-timing.py; return {role: [(phase, start, duration)]}."""
        html = self.path("timeline.html")
        out, err, code = yield utils.getProcessOutputAndValue(
            sys.executable, [SCRIPT, *bundles, "-o", html, "--summary"],
            env=dict(os.environ))
        self.assertEqual(code, 0, err)
        self.assertIn(b"timeline written to", err)
        phases = {}
        for line in out.decode().splitlines():
            role, name, start, duration = line.split("\t")
            phases.setdefault(role, []).append((name, float(start), float(duration)))
        with open(html, encoding="utf-8") as f:
            self.html = f.read()
        return phases

    def assertPhases(self, phases, role, names, early_close=False):
        """The phases ``names``, in that order, starting in that order.

        ``early_close``: a file transfer closes the wormhole as soon as
        Transit can start (spec 004 9.3), so `close` starts after
        `version` but may start before `transit connect` and `transfer`."""
        got = phases[role]
        self.assertEqual([p[0] for p in got], names, f"{role}: {got}")
        ordered = [p for p in got if not (early_close and p[0] == "close")]
        starts = [p[1] for p in ordered]
        self.assertEqual(starts, sorted(starts), f"{role} phases out of order: {got}")
        if early_close:
            start = dict((p[0], p[1]) for p in got)
            self.assertGreaterEqual(start["close"], start["version"], f"{role}: {got}")
        for name, start, duration in got:
            self.assertGreaterEqual(duration, 0.0, f"{role} {name}: {got}")
            self.assertIn(f"<td>{name}</td>", self.html)


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
