"""End to end (docs/analytics.md, "Tests"): our Mailbox server and Transit
relay run as ``twistd`` subprocesses with ``--usage-events``; real
wormholes (happy, wrong code, lonely, crowded) and real relay sessions
(happy with known byte counts, lonely, errory) go through them; then the
Spark jobs run on the events the servers wrote, and the report's numbers
are checked against what happened."""

import collections
import glob
import os
import re
import signal
import sqlite3
import sys

from twisted.internet import defer, reactor, utils
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.internet.task import deferLater
from twisted.trial import unittest

import wormhole
from wormhole import errors
from wormhole._version import IMPLEMENTATION
from wormhole_analytics._ingest import ingest
from wormhole_analytics._report import run_report

from .._processes import child_env
from ..relay import _subprocess as relay_proc
from ..server import _subprocess as server_proc
from ._spark import QuietProgress, spark

APPID = "example.com/analytics-e2e"


class RelayClient(Protocol):
    """One side of a relay session: handshake, wait for ok, send
    ``payload``, read what the partner sends, close when told."""

    def __init__(self, handshake, payload=b""):
        self.handshake = handshake
        self.payload = payload
        self.received = b""
        self.ok = defer.Deferred()
        self.lost = defer.Deferred()

    def connectionMade(self):
        self.transport.write(self.handshake)

    def dataReceived(self, data):
        if not self.ok.called:
            if not data.startswith(b"ok\n"):
                self.ok.errback(Exception(data))
                return
            data = data[3:]
            self.ok.callback(None)
            if self.payload:
                self.transport.write(self.payload)
        self.received += data

    def connectionLost(self, reason):
        self.lost.callback(None)


class EndToEnd(unittest.TestCase):
    timeout = 240

    def create(self, url):
        return wormhole.create(APPID, url, reactor, _reconnect_delay=0.05,
                               _reconnect_max_delay=0.2)

    @defer.inlineCallbacks
    def _stop_mailbox(self, proc):
        """SIGTERM (by PID) and wait: a clean stop flushes the events."""
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        for _ in range(400):
            if proc.poll() is not None:
                return
            yield deferLater(reactor, 0.05, lambda: None)
        raise AssertionError("mailbox server did not stop on SIGTERM")

    @defer.inlineCallbacks
    def _wormholes(self, url):
        happy = 0
        for i in range(2):
            w1, w2 = self.create(url), self.create(url)
            w1.allocate_code()
            code = yield w1.get_code()
            w2.set_code(code)
            w1.send_message(b"hi %d" % i)
            self.assertEqual((yield w2.get_message()), b"hi %d" % i)
            yield w1.close()
            yield w2.close()
            happy += 1
        # wrong code: scary
        w1, w2 = self.create(url), self.create(url)
        w1.set_code("17-abc-def")
        w2.set_code("17-abc-deg")
        yield self.assertFailure(w1.get_verifier(), errors.WrongPasswordError)
        yield self.assertFailure(w2.get_verifier(), errors.WrongPasswordError)
        yield self.assertFailure(w1.close(), errors.WrongPasswordError)
        yield self.assertFailure(w2.close(), errors.WrongPasswordError)
        # lonely: nobody comes
        w = self.create(url)
        w.set_code("18-abc-def")
        yield w.get_welcome()
        yield self.assertFailure(w.close(), errors.LonelyError)
        # crowded: three on one nameplate
        ws = [self.create(url) for _ in range(3)]
        for w in ws:
            w.set_code("21-abc-def")
        got = yield defer.DeferredList([w.get_verifier() for w in ws],
                                       consumeErrors=True)
        closed = yield defer.DeferredList([w.close() for w in ws],
                                          consumeErrors=True)
        # the two that got in before the crowd may finish happily
        if sum(ok for ok, _ in got) == 2 and sum(
                ok and r == "happy" for ok, r in closed) == 2:
            happy += 1
        return 2 * 2 + 2 + 1 + 3, happy  # (sides, happy mailboxes)

    @defer.inlineCallbacks
    def _relay_sessions(self, port):
        def connect(proto):
            return connectProtocol(
                TCP4ClientEndpoint(reactor, "127.0.0.1", port), proto)
        sent = 0
        for i, (n1, n2) in enumerate(((1000, 5000), (70000, 3))):
            token = "%064x" % (i + 1)
            a = RelayClient(b"please relay %s for side %016x\n"
                            % (token.encode(), 1), b"a" * n1)
            b = RelayClient(b"please relay %s for side %016x\n"
                            % (token.encode(), 2), b"b" * n2)
            yield connect(a)
            yield connect(b)
            yield defer.gatherResults([a.ok, b.ok])
            while len(a.received) < n2 or len(b.received) < n1:
                yield deferLater(reactor, 0.02, lambda: None)
            a.transport.loseConnection()
            yield defer.gatherResults([a.lost, b.lost])
            sent += n1 + n2
        # lonely: a handshake and nobody else
        c = RelayClient(b"please relay %064x for side %016x\n" % (99, 1))
        yield connect(c)
        yield deferLater(reactor, 0.2, lambda: None)
        c.transport.loseConnection()
        yield c.lost
        # errory: not a handshake
        d = RelayClient(b"hello relay\n")
        d.ok.addErrback(lambda f: None)  # "bad handshake" is expected
        yield connect(d)
        yield d.lost
        return sent

    @defer.inlineCallbacks
    def test_report_matches_what_happened(self):
        """The report's counts by result, relay bytes and client sides
        equal what the test did, and the mailbox counts equal the
        server's own --usage-db."""
        base = os.path.abspath(self.mktemp())
        events = os.path.join(base, "events")
        usage_db = os.path.join(base, "usage.sqlite")
        mproc, url = yield server_proc.start_twistd(
            self, os.path.join(base, "mailbox"),
            f"--usage-events={events}", "--server-id=mbx-1",
            f"--usage-db={usage_db}")
        rproc, rport = yield relay_proc.start_twistd(
            self, relay_proc.our_twistd(),
            [f"--usage-events={events}", "--server-id=relay-1"])
        sides, happy = yield self._wormholes(url)
        relay_bytes = yield self._relay_sessions(rport)
        yield self._stop_mailbox(mproc)
        yield rproc.stop()
        files = sorted(glob.glob(os.path.join(events, "*.jsonl")))
        self.assertTrue(any("mailbox-events" in f for f in files), files)
        self.assertTrue(any("relay-events" in f for f in files), files)

        store, out = os.path.join(base, "store"), os.path.join(base, "out")
        got = ingest(spark(), [events], store, include_open=True,
                     progress=QuietProgress())
        if got["quarantined"]:
            bad = spark().read.parquet(os.path.join(store, "quarantine"))
            self.fail([(r["_reason"], r["_raw"]) for r in bad.collect()])
        tables = run_report(spark(), store, out, progress=QuietProgress())
        daily = tables["daily"]
        per = daily[daily["server"] != "*"]

        def counts(kind, server):
            rows = per[(per["kind"] == kind) & (per["server"] == server)]
            return {r: int(rows[r].sum()) for r in
                    ("happy", "lonely", "scary", "errory", "crowded",
                     "pruney", "quiet", "impatient", "redundant", "jilted",
                     "empty")
                    if int(rows[r].sum())}, rows

        mb, mb_rows = counts("mailbox", "mbx-1")
        self.assertEqual(mb.get("happy"), happy)
        self.assertEqual(mb.get("scary"), 1)
        self.assertEqual(set(mb_rows["app_id"]), {APPID})
        np_, _ = counts("nameplate", "mbx-1")
        both = collections.Counter(mb) + collections.Counter(np_)
        self.assertGreaterEqual(both["lonely"], 1)
        self.assertGreaterEqual(both["crowded"], 1)
        # the server's own SQLite usage records say the same
        db = sqlite3.connect(usage_db)
        # (the reference's layout: a table per kind, docs/server.md)
        for table, ours in (("mailboxes", mb), ("nameplates", np_)):
            theirs = dict(db.execute(
                f"SELECT result, COUNT(*) FROM {table} GROUP BY result"))
            self.assertEqual(theirs, ours, table)
        db.close()

        rl, rl_rows = counts("relay", "relay-1")
        # the readiness probe of start_twistd connects and goes: `empty`
        probes = rl.pop("empty", 0)
        self.assertGreaterEqual(probes, 1)
        self.assertEqual(rl, {"happy": 2, "lonely": 1, "errory": 1})
        self.assertEqual(int(rl_rows["bytes"].sum()), relay_bytes)
        sizes = tables["sizes"]
        self.assertEqual(int(sizes["n"].sum()), 4 + probes)

        v = tables["versions"]
        self.assertEqual(int(v["sides"].sum()), sides)
        # our clients name this implementation in bind (wormhole._version)
        self.assertEqual(set(v["impl"]), {IMPLEMENTATION})
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        yield self._operator_runs_the_report(store, base)

    @defer.inlineCallbacks
    def _operator_runs_the_report(self, store, base):
        """``wormhole-analytics report`` as an operator runs it: the
        terminal gets the job's progress lines and Spark's progress bar,
        and nothing of the JVM's (log4j notices, the launcher's incubator
        warning, DataSketches' Java-version warning)."""
        out = os.path.join(base, "out-cli")
        stdout, stderr, code = yield utils.getProcessOutputAndValue(
            sys.executable,
            ["-m", "wormhole_analytics", "report", "--store", store,
             "--out", out, "--master", "local[1]",
             # no class-data archive to write at exit: a shorter test
             "--conf", "spark.wormhole.classArchive=false"],
            env=child_env())
        self.assertEqual(code, 0, stderr.decode(errors="replace")[-3000:])
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        shown = [line.strip() for line in
                 stderr.decode(errors="replace").replace("\r", "\n")
                 .splitlines()]
        noise = [line for line in shown if line
                 and not re.match(r"\[(report|Stage \d+)", line)]
        self.assertEqual(noise, [])
        self.assertIn("writing published tables and HTML", stderr.decode())
