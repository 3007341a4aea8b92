"""What the end-to-end timing tests share (test_e2e.py, test_e2e_file.py):
our Mailbox server in-process, CLIs spawned with --dump-timing, and
misc/dump-timing.py rendering their bundles."""

import os
import sys

from twisted.internet import defer, reactor, utils

from tests.cli._process import CLIProcess, our_cli
from tests.cli._support import NO_TRANSIT, REPO
from wormhole_mailbox.testing import start_mailbox_server

SCRIPT = os.path.join(REPO, "misc", "dump-timing.py")


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
        Transit can start (File-transfer protocol, "Transit"), so `close`
        starts after `version` but may start before `transit connect` and
        `transfer`."""
        got = phases[role]
        self.assertEqual([p[0] for p in got], names, f"{role}: {got}")
        ordered = [p for p in got if not (early_close and p[0] == "close")]
        starts = [p[1] for p in ordered]
        self.assertEqual(starts, sorted(starts), f"{role} phases out of order: {got}")
        if early_close:
            start = dict((p[0], p[1]) for p in got)
            self.assertGreaterEqual(start["close"], start["version"], f"{role}: {got}")
        for name, _start, duration in got:
            self.assertGreaterEqual(duration, 0.0, f"{role} {name}: {got}")
            self.assertIn(f"<td>{name}</td>", self.html)
