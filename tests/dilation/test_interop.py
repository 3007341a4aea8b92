"""Dilation against the reference magic-wormhole 0.24 (Dilation protocol;
the wire facts in docs/dilation.md,
"Wire facts settled by interop with the reference 0.24"). Each test runs
tests/dilation/netns_interop in a loopback-only network namespace
(``unshare -n``), because the reference listens on and advertises every
local address: there that is 127.0.0.1. The reference peer is a subprocess
of its own venv (tests/dilation/ref_peer.py).

Each run checks: our subchannel id parity (Leader odd, Follower even) and
theirs, data both ways through subprotocols named in OPEN (theirs to our
listener "hello", ours to their listener "echo"), close handshakes both
ways, and both wormholes closing happy.
"""

import json
import os
import shutil

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from ._support import REPO_ROOT, reference_python

TIMEOUT = 120


class Interop(unittest.TestCase):
    timeout = TIMEOUT

    @defer.inlineCallbacks
    def run_in_namespace(self, role, relay, extra=""):
        reference_python()  # fails (not skips) when the reference is missing
        unshare, ip = shutil.which("unshare"), shutil.which("ip")
        self.assertTrue(unshare and ip, "needs unshare(1) and ip(8), and root, to run "
                        "the reference in a loopback-only namespace")
        python = os.path.join(REPO_ROOT, ".venv", "bin", "python")
        script = (f"ip link set lo up && {python} -m tests.dilation.netns_interop "
                  f"{role} {relay} {extra}")
        env = dict(os.environ)
        env["PYTHONPATH"] = REPO_ROOT
        out, err, code = yield getProcessOutputAndValue(
            unshare, ["-n", "--", "sh", "-c", script], path=REPO_ROOT, env=env,
            reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace")[-3000:])
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertTrue(result["ok"], result)
        leader_scid, follower_scid = ((result["our_scid"], result["their_scid"])
                                      if role == "leader" else
                                      (result["their_scid"], result["our_scid"]))
        self.assertEqual((leader_scid % 2, follower_scid % 2), (1, 0), result)
        self.assertTrue(result["echo_ok"], "the reference echoed other bytes")
        self.assertTrue(result["hello_ok"], "we received other bytes than the reference sent")
        self.assertTrue(result["their_echo_closed"], result)
        self.assertEqual((result["their_close"], result["our_close"]), ("'happy'", "happy"))
        return result

    @defer.inlineCallbacks
    def test_leader_direct(self):
        """We lead (larger side) over a direct connection the reference dials."""
        r = yield self.run_in_namespace("leader", "none")
        self.assertFalse(r["via"].startswith("->relay"), r)

    @defer.inlineCallbacks
    def test_follower_direct(self):
        """We follow (smaller side) over a direct connection."""
        r = yield self.run_in_namespace("follower", "none")
        self.assertFalse(r["via"].startswith("->relay"), r)

    @defer.inlineCallbacks
    def test_leader_direct_with_relay_offered(self):
        """Both sides also offer our relay; a connection is still selected
        and data flows (whichever wins)."""
        yield self.run_in_namespace("leader", "ours")

    @defer.inlineCallbacks
    def test_leader_our_relay_only(self):
        """Neither side listens: the connection goes through our relay
        (relay token from the Dilation key, sided handshake)."""
        r = yield self.run_in_namespace("leader", "only")
        self.assertTrue(r["via"].startswith("->relay:127.0.0.1:"), r)

    @defer.inlineCallbacks
    def test_follower_our_relay_only(self):
        """As the Follower, through our relay only."""
        r = yield self.run_in_namespace("follower", "only")
        self.assertTrue(r["via"].startswith("->relay:127.0.0.1:"), r)

    @defer.inlineCallbacks
    def test_leader_reference_relay_only(self):
        """As the Leader, through the reference relay 0.5 only."""
        r = yield self.run_in_namespace("leader", "ref-only")
        self.assertTrue(r["via"].startswith("->relay:127.0.0.1:"), r)

    @defer.inlineCallbacks
    def test_follower_reference_relay_only(self):
        """As the Follower, through the reference relay 0.5 only."""
        r = yield self.run_in_namespace("follower", "ref-only")
        self.assertTrue(r["via"].startswith("->relay:127.0.0.1:"), r)

    @defer.inlineCallbacks
    def test_ping_interval_we_follow(self):
        """The reference Leader with ping_interval=0.5 PINGs us; we answer
        each with a PONG, so it never drops the connection (generation 1
        after six intervals; unanswered, it reconnects every interval)."""
        r = yield self.run_in_namespace("follower", "none", "ping")
        self.assertEqual(r["generation"], 1, r)

    @defer.inlineCallbacks
    def test_ping_interval_we_lead(self):
        """Our Leader with ping_interval=0.5 PINGs the reference, which
        answers in time: no reconnection."""
        r = yield self.run_in_namespace("leader", "none", "ping")
        self.assertEqual(r["generation"], 1, r)
        self.assertGreaterEqual(r["pings_answered"], 4, r)

    @defer.inlineCallbacks
    def test_idle_reference_follower_kept(self):
        """We lead an idle connection to the reference, whose Follower
        sends no keepalives of its own: our keepalive's idle PING (every
        0.5 s here) makes it answer, so our silence check (1 s here) keeps
        the connection (no second generation)."""
        r = yield self.run_in_namespace("leader", "none", "idle")
        self.assertEqual(r["generation"], 1, r)
        self.assertGreaterEqual(r["pings_answered"], 4, r)

    @defer.inlineCallbacks
    def test_idle_reference_leader_kept(self):
        """We follow an idle reference Leader left at its default 30 s
        ping_interval (so it PINGs nothing during the run): our Follower's
        keepalive PINGs it every 0.5 s, it answers, and our silence check
        (1 s) keeps the connection."""
        r = yield self.run_in_namespace("follower", "none", "idle")
        self.assertEqual(r["generation"], 1, r)
        self.assertGreaterEqual(r["pings_answered"], 4, r)
