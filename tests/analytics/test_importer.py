"""The importer of the reference servers' usage databases (docs/analytics.md,
"Commands"): databases are created from the reference packages' own
schema files (``db-schemas/*.sql`` of magic-wormhole-mailbox-server 0.8
and magic-wormhole-transit-relay 0.5, printed by the reference venv's
Python, never copied here), filled with rows, imported with our plain
``sqlite3`` code, and ingested."""

import json
import os
import sqlite3
import subprocess

from twisted.trial import unittest

from wormhole_analytics import _importer as I
from wormhole_analytics._cli import main as cli_main
from wormhole_analytics._ingest import ingest

from ._spark import QuietProgress, spark

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DAY1 = 1767225600


def reference_schema(package, name):
    """The SQL text of a schema file shipped in a reference package."""
    venv = os.environ.get("WORMHOLE_REFERENCE_VENV",
                          os.path.join(REPO, ".venv-ref"))
    python = os.path.join(venv, "bin", "python")
    code = ("import importlib.resources as r, sys; sys.stdout.write("
            f"r.files({package!r}).joinpath('db-schemas/{name}')"
            ".read_text())")
    return subprocess.run([python, "-c", code], check=True,
                          capture_output=True, text=True,
                          timeout=120).stdout


class Importer(unittest.TestCase):
    def _mailbox_db(self):
        path = os.path.abspath(self.mktemp())
        db = sqlite3.connect(path)
        db.executescript(reference_schema("wormhole_mailbox_server",
                                          "usage-v2.sql"))
        db.execute("INSERT INTO version VALUES (2)")
        db.executemany("INSERT INTO nameplates VALUES (?,?,?,?,?)", [
            ("app1", DAY1 + 10, 3, 20, "happy"),
            ("app1", DAY1 + 86400 + 5, None, 600, "lonely"),
        ])
        db.executemany("INSERT INTO mailboxes VALUES (?,?,?,?,?,?)", [
            ("app1", 1, DAY1 + 10, 30, 3, "happy"),
            ("app2", 0, DAY1 + 50, 4, 1, "scary"),
            ("app2", 1, DAY1 + 60, 9, 2, "crowded"),
            ("app2", 1, DAY1 + 70, 9, 2, "weird"),  # not a known mood
        ])
        db.executemany("INSERT INTO client_versions VALUES (?,?,?,?,?)", [
            ("app1", "s1", DAY1 + 10, "python", "0.24.0"),
            ("app1", "s1", DAY1 + 12, "python", "0.24.0"),  # reconnect
            ("app1", "s2", DAY1 + 13, "go", "v1.0.7"),
        ])
        db.commit()
        db.close()
        return path

    def _relay_db(self):
        path = os.path.abspath(self.mktemp())
        db = sqlite3.connect(path)
        db.executescript(reference_schema("wormhole_transit_relay",
                                          "v1.sql"))
        db.execute("INSERT INTO version VALUES (1)")
        db.executemany("INSERT INTO usage VALUES (?,?,?,?,?)", [
            (DAY1 + 100, 12, 2, 5000000, "happy"),
            (DAY1 + 200, 60, None, 0, "lonely"),
            (DAY1 + 300, 1, None, 0, "empty"),
        ])
        db.commit()
        db.close()
        return path

    def test_mailbox_db(self):
        """Every nameplate, mailbox and client_versions row becomes one
        event with its fields; client_versions rows become bind events."""
        evs = list(I.mailbox_events(self._mailbox_db(), "old-1"))
        kinds = [e["kind"] for e in evs]
        self.assertEqual(kinds.count("nameplate"), 2)
        self.assertEqual(kinds.count("mailbox"), 4)
        self.assertEqual(kinds.count("bind"), 3)
        mb = [e for e in evs if e["kind"] == "mailbox"]
        self.assertEqual(mb[0], {
            "v": 1, "server": "old-1", "kind": "mailbox", "app_id": "app1",
            "started": DAY1 + 10, "waiting_time": 3, "total_time": 30,
            "result": "happy", "bytes": None, "clients": []})
        binds = [e for e in evs if e["kind"] == "bind"]
        self.assertEqual(binds[2]["clients"], [
            {"side": "s2", "impl": "go", "version": "v1.0.7"}])

    def test_relay_db_and_log(self):
        """Relay rows and JSON-log lines become relay events; a log line
        that is not JSON is passed on for the quarantine."""
        evs = list(I.relay_db_events(self._relay_db(), "r"))
        self.assertEqual([(e["result"], e["bytes"]) for e in evs],
                         [("happy", 5000000), ("lonely", 0), ("empty", 0)])
        log = os.path.abspath(self.mktemp())
        with open(log, "w") as f:
            f.write(json.dumps({"started": DAY1, "total_time": 3,
                                "waiting_time": 1, "total_bytes": 10,
                                "mood": "happy"}) + "\n")
            f.write("not json\n")
        evs = list(I.relay_log_events(log, "r"))
        self.assertEqual(evs[0]["bytes"], 10)
        self.assertEqual(evs[1], "not json")

    def test_wrong_database(self):
        """A relay database given as a mailbox database is refused with a
        message that says what was expected."""
        e = self.assertRaises(ValueError, list,
                              I.mailbox_events(self._relay_db(), "x"))
        self.assertIn("schema version 2", str(e))

    def test_cli_import_then_ingest(self):
        """``import`` writes daily event files that ``ingest`` reads: the
        unknown mood and the bad log line land in the quarantine, every
        other row in the store; versions dedupe the reconnect by side."""
        out = os.path.abspath(self.mktemp())
        log = os.path.abspath(self.mktemp())
        with open(log, "w") as f:
            f.write("garbage\n")
        rc = cli_main(["import", "--server-id", "old-1",
                       "--mailbox-db", self._mailbox_db(),
                       "--relay-db", self._relay_db(),
                       "--relay-log", log, "--out", out])
        self.assertEqual(rc, 0)
        store = os.path.abspath(self.mktemp())
        got = ingest(spark(), [out], store, include_open=True,
                     progress=QuietProgress())
        self.assertEqual((got["events"], got["quarantined"]), (11, 2))
        from wormhole_analytics import _aggregate as A
        summary = A.read_table(spark(), os.path.join(store, "summary",
                                                     "versions"))
        v = {(r["impl"], r["sides"])
             for r in A.versions(summary).collect()}
        self.assertEqual(v, {("python", 1), ("go", 1)})
