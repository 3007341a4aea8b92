"""Our Transit relay replaces the reference relay (0.5) on its
``--usage-db``: real relayed pairs through each, then the reference's munin
plugins (from its source distribution, run by its python) read the counts
and bytes those pairs imply; a file of another layout is refused. And
``--metrics`` scraped after real pairs."""

import json
import os
import sqlite3

from prometheus_client.parser import text_string_to_metric_families
from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks, returnValue
from twisted.internet.task import deferLater
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest
from twisted.web.client import Agent, readBody

from wormhole_ops.usage import RelaySQLiteWriter, SchemaError
from wormhole_relay._plugin import Options, makeService

from .._munin import our_plugin, run_plugin
from .._processes import free_port, reference_bin, reference_source_file
from ._client import Clients
from ._subprocess import our_twistd, reference_twistd, start_twistd


def _rows(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT result, total_bytes FROM usage"
                          " ORDER BY rowid").fetchall()
    finally:
        db.close()


class _Pairs(unittest.TestCase):
    timeout = 120

    def relay_pair(self, port, token, size):
        return Clients(reactor, self).relay_pair(port, token, size)

    @inlineCallbacks
    def wait_rows(self, path, n):
        for _ in range(400):
            if os.path.exists(path) and len(_rows(path)) >= n:
                returnValue(_rows(path))
            yield deferLater(reactor, 0.05, lambda: None)
        self.fail(f"fewer than {n} usage rows in {path}: {_rows(path)}")

    @inlineCallbacks
    def munin(self, plugin, usage_db):
        path = reference_source_file("magic_wormhole_transit_relay", "misc",
                                     "munin", plugin)
        graphs = yield run_plugin(self, path, {"usagedb": usage_db},
                                  python=reference_bin("python"))
        returnValue(graphs[None])



class DropIn(_Pairs):
    @inlineCallbacks
    def test_reference_then_ours(self):
        """The reference relay records a relayed pair; ours, on the same
        file, keeps that row, records its own pair the same way, and the
        reference's munin plugins count both pairs and all their bytes."""
        workdir = os.path.abspath(self.mktemp())
        os.makedirs(workdir)
        usage_db = os.path.join(workdir, "usage.sqlite")
        ref, port = yield start_twistd(self, reference_twistd(),
                                       ["--usage-db", usage_db], cwd=workdir)
        yield self.relay_pair(port, "c" * 64, 1000)
        # each relay also records the start-up probe (a connection that
        # closed before a handshake) as "empty"
        yield self.wait_rows(usage_db, 2)
        yield ref.stop()

        ours, port = yield start_twistd(self, our_twistd(),
                                        ["--usage-db", usage_db],
                                        cwd=workdir)
        yield self.relay_pair(port, "d" * 64, 5000)
        rows = yield self.wait_rows(usage_db, 4)
        self.assertEqual(rows, [("empty", 0), ("happy", 2000),
                                ("empty", 0), ("happy", 10000)])
        events = yield self.munin("wormhole_transit_events_alltime",
                                  usage_db)
        self.assertEqual((events["happy"], events["errory"],
                          events["lonely"]), (2, 0, 0))
        sizes = yield self.munin("wormhole_transit_bytes_alltime", usage_db)
        self.assertEqual(sizes, {"bytes": 12000, "incomplete": 12000})
        active = yield self.munin("wormhole_transit_active", usage_db)
        self.assertEqual(active, {"waiting": 0, "connected": 0})
        # our plugin: since our start, our probe and our pair
        graphs = yield run_plugin(self, our_plugin("wormhole_relay"),
                                  {"usagedb": usage_db})
        self.assertEqual(graphs["wormhole_relay_results"], {
            "happy": 1, "empty": 1, "lonely": 0, "errory": 0,
            "impatient": 0, "redundant": 0, "jilted": 0})
        self.assertEqual(graphs["wormhole_relay_bytes"],
                         {"finished": 10000, "with_open": 10000})
        config = yield run_plugin(self, our_plugin("wormhole_relay"),
                                  {"usagedb": usage_db}, config=True)
        self.assertEqual(config["wormhole_relay_bytes"]["graph_vlabel"],
                         "bytes")
        yield ours.stop()


class Refusal(unittest.TestCase):
    def test_other_layout_refused(self):
        """A --usage-db of another layout (here: a Mailbox server's usage
        database) is refused with one line naming the file; the file is
        left as it was."""
        path = os.path.abspath(self.mktemp())
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE version (version INTEGER)")
        db.execute("INSERT INTO version VALUES (2)")
        db.execute("CREATE TABLE mailboxes (app_id VARCHAR)")
        db.commit()
        db.close()
        e = self.assertRaises(SchemaError, RelaySQLiteWriter, reactor, path)
        self.assertIn("version 2", str(e))
        config = Options()
        config.parseOptions(["--usage-db", path])
        e = self.assertRaises(SystemExit, makeService, config,
                              MemoryReactorClock())
        self.assertTrue(str(e.code).startswith("transitrelay: " + path))
        db = sqlite3.connect(path)
        self.assertEqual({r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")},
            {"version", "mailboxes"})
        db.close()


class Metrics(_Pairs):
    @inlineCallbacks
    def test_scrape_after_pairs(self):
        """`twistd transitrelay --metrics`, scraped with prometheus_client's
        parser after two relayed pairs (1000 and 5000 bytes each way): 2
        happy sessions and the start-up probe's "empty" one, 12000 bytes,
        5 connections, nothing open; /health says it accepts work."""
        mport = free_port()
        _, port = yield start_twistd(
            self, our_twistd(),
            ["--metrics", f"tcp:{mport}:interface=127.0.0.1"])
        yield self.relay_pair(port, "e" * 64, 1000)
        yield self.relay_pair(port, "f" * 64, 5000)
        agent = Agent(reactor)
        got = {}
        for _ in range(100):
            response = yield agent.request(
                b"GET", f"http://127.0.0.1:{mport}/metrics".encode())
            text = (yield readBody(response)).decode()
            got = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for f in text_string_to_metric_families(text)
                   for s in f.samples}
            if got.get(("wormhole_relay_open_connections", ())) == 0:
                break
            yield deferLater(reactor, 0.05, lambda: None)
        p = "wormhole_relay_"
        self.assertEqual(got[p + "sessions_total", (("result", "happy"),)],
                         2)
        self.assertEqual(got[p + "sessions_total", (("result", "empty"),)],
                         1)
        self.assertEqual(got[p + "bytes_relayed_total", ()], 12000)
        self.assertEqual(got[p + "connections_total", ()], 5)
        for gauge in ("open_connections", "paired_connections",
                      "waiting_connections", "incomplete_bytes"):
            self.assertEqual(got[p + gauge, ()], 0)
        response = yield agent.request(
            b"GET", f"http://127.0.0.1:{mport}/health".encode())
        self.assertEqual(response.code, 200)
        self.assertEqual(json.loads((yield readBody(response))),
                         {"accepting": True, "paired": 0, "waiting": 0})
