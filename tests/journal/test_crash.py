"""Journalled mode with real processes and real servers (Journalled
mode): two copies of misc/demo-journal.py's application
(tests/journal/journal_app.py) exchange lines through a Mailbox server on
127.0.0.1; one, then the other, then both are killed with SIGKILL at every
step of the exchange in turn and restarted from their checkpoint files.

Each lifetime dies at its first transaction that changes its checkpoint,
the position rotating: before the checkpoint is written, between the
checkpoint and the release of what it queued, after the release, and
while reconnecting (after a restart's welcome, before its bind): a plan
of about one and a half times as many lifetimes as the exchange has steps
walks through all of them. Whatever the kills, each line arrives exactly
once, in order, and both sides close happy.

The same against the reference Mailbox server 0.8, and with the peer being
the reference 0.24 client (not journalled, so only our side dies).
"""

import json
import os
import sys

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .._processes import REPO_ROOT
from ..interop.processes import new_dir, spawn, wait_all
from ..interop.reference import ref_peer_argv
from ..interop.servers import RefMailboxServer, start_our_server
from .demo import demo

LINES = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"]}
# transactions that change a side's checkpoint in one exchange, measured
# by test_no_kills ("transactions: N"); the plans cover them all
STEPS = 18
POSITIONS = ("released", "after", "before", "reconnect")
# a side that is never killed lives while its peer dies and restarts some
# 27 times: on a loaded machine (load 13 on 2 cores) that took minutes
LIFETIME_TIMEOUT = 540


def plan(offset, length):
    """Die at the first changing transaction of each lifetime, the
    positions rotating from ``offset``."""
    kills = []
    for i in range(length):
        position = POSITIONS[(i + offset) % len(POSITIONS)]
        kills.append(f"{position}:{0 if position == 'reconnect' else 1}")
    return kills


class AppProcess:
    """One side: its lifetimes, restarted after each SIGKILL, until one
    exits 0."""

    def __init__(self, test, name, url, code, kills):
        self.test = test
        self.name = name
        self.url = url
        self.code = code
        self.kills = list(kills)
        self.state = os.path.join(new_dir(test), "state.json")
        self.lifetimes = []

    @defer.inlineCallbacks
    def run(self):
        while True:
            kill = self.kills.pop(0) if self.kills else None
            argv = [sys.executable, "-m", "tests.journal.journal_app", self.state,
                    "--relay-url", self.url, "--code", self.code]
            argv += ["--kill", kill] if kill else []
            run = spawn(self.test, reactor, argv + LINES[self.name],
                        f"{self.name} lifetime {len(self.lifetimes)} ({kill})", cwd=REPO_ROOT,
                        timeout=LIFETIME_TIMEOUT)
            self.lifetimes.append(run)
            yield run.ended()
            signal = getattr(run.status, "signal", None)
            if run.exit_code == 0 and b"Traceback" not in run.stderr:
                return run
            if kill is None or signal != 9:
                self.test.fail(f"{run.name} ended unexpectedly:\n{run.describe()}")

    def final_state(self):
        with open(self.state, encoding="utf-8") as f:
            return json.load(f)["state"]


class CrashBase(unittest.TestCase):
    timeout = 900

    def start_server(self):
        raise NotImplementedError

    @defer.inlineCallbacks
    def exchange(self, url, code, kills_a=(), kills_b=()):
        a = AppProcess(self, "a", url, code, kills_a)
        b = AppProcess(self, "b", url, code, kills_b)
        yield defer.gatherResults([a.run(), b.run()], consumeErrors=True)
        for side, peer, kills in ((a, b, kills_a), (b, a, kills_b)):
            state = side.final_state()
            # exactly once, in order, whatever the kills
            self.assertEqual(state["received"], LINES[peer.name] + [demo.BYE], side.name)
            self.assertEqual(state["closed"], "happy", side.name)
            # every planned kill happened: the plan was no longer than the exchange
            self.assertEqual(len(side.lifetimes), len(kills) + 1, side.name)
        return a, b


class OurServerCrashTests(CrashBase):
    @defer.inlineCallbacks
    def start_server(self):
        srv = yield start_our_server(self, reactor)
        return srv.url

    @defer.inlineCallbacks
    def test_no_kills(self):
        """The exchange, nobody killed: it has STEPS changing transactions
        a side (which the plans below are measured against)."""
        url = yield self.start_server()
        a, b = yield self.exchange(url, "11-no-kills")
        for side in (a, b):
            out = side.lifetimes[-1].stdout.decode()
            self.assertIn("closed: happy", out)
            self.assertIn(f"transactions: {STEPS}", out)

    @defer.inlineCallbacks
    def test_kill_a_then_b(self):
        """A killed at every step in turn; in a second exchange (run at
        the same time, with another code), B, the positions shifted."""
        url = yield self.start_server()
        yield defer.gatherResults([
            self.exchange(url, "12-kill-a", kills_a=plan(0, STEPS + STEPS // 2)),
            self.exchange(url, "13-kill-b", kills_b=plan(1, STEPS + STEPS // 2))],
            consumeErrors=True)

    @defer.inlineCallbacks
    def test_kill_both(self):
        """Both killed again and again, out of step."""
        url = yield self.start_server()
        yield self.exchange(url, "14-kill-both", kills_a=plan(2, STEPS), kills_b=plan(3, STEPS))


class ReferenceServerCrashTests(CrashBase):
    """The reference Mailbox server 0.8 keeps what the kills rely on:
    mailboxes and their messages across reconnections, a re-claim and a
    second release of a nameplate by the same side, a re-open."""

    @defer.inlineCallbacks
    def start_server(self):
        srv = yield RefMailboxServer.start(self, reactor)
        self.addCleanup(srv.stop)
        return srv.url

    @defer.inlineCallbacks
    def test_kill_one_and_both(self):
        """On the reference server, at the same time: A killed at every
        step in turn, and (another code) both killed."""
        url = yield self.start_server()
        yield defer.gatherResults([
            self.exchange(url, "15-kill-a", kills_a=plan(1, STEPS + STEPS // 2)),
            self.exchange(url, "16-kill-both", kills_a=plan(0, STEPS), kills_b=plan(2, STEPS))],
            consumeErrors=True)


class ReferencePeerCrashTests(CrashBase):
    """The peer is the reference 0.24 client (Deferred mode, never
    killed: it has no journal), playing the same exchange."""

    @defer.inlineCallbacks
    def start_server(self):
        srv = yield start_our_server(self, reactor)
        return srv.url

    @defer.inlineCallbacks
    def test_kill_ours(self):
        """Our side killed at every step in turn; the reference peer gets
        each line once and closes happy."""
        url = yield self.start_server()
        code = "17-kill-ours"
        steps = []
        for line in LINES["b"] + [demo.BYE]:
            steps += [["send", line], ["recv", 1]]
        peer = spawn(self, reactor, ref_peer_argv(
            {"relay_url": url, "appid": demo.APPID, "code": code, "steps": steps}),
            "reference peer", timeout=LIFETIME_TIMEOUT)
        kills = plan(0, STEPS + STEPS // 2)
        ours = AppProcess(self, "a", url, code, kills)
        yield defer.gatherResults([ours.run(), wait_all(self, [peer])], consumeErrors=True)
        self.assertEqual(ours.final_state()["received"], LINES["b"] + [demo.BYE])
        self.assertEqual(ours.final_state()["closed"], "happy")
        events = peer.events()
        self.assertEqual([e["text"] for e in events if e["event"] == "message"],
                         LINES["a"] + [demo.BYE])
        self.assertEqual(events[-1], {"event": "closed", "result": "'happy'"})
        self.assertEqual(len(ours.lifetimes), len(kills) + 1)
