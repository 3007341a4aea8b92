"""The channel and usage databases keep the reference server's layout
(compared with the reference package's own schema files), upgrade what the
reference would, and refuse anything else with a clear message.

Not a unit test: it reads the reference venv, which ``./dev unit`` does not
install."""

import os
import sqlite3

from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest

from wormhole_mailbox._plugin import Options, makeService
from wormhole_mailbox._schema import SchemaError
from wormhole_mailbox._store import SQLiteStore

from .._paths import reference_package_file


def _reference_db(path, schema_file, version=None):
    """A database made from the reference's own schema file (whose
    version row the reference's code adds: ``version``)."""
    sql_path = reference_package_file("wormhole_mailbox_server",
                                      "db-schemas", schema_file)
    db = sqlite3.connect(path)
    with open(sql_path) as f:
        db.executescript(f.read())
    if version is not None:
        db.execute("INSERT INTO version VALUES (?)", (version,))
        db.commit()
    return db


def _layout(path):
    """{table: [(column, declared type, pk)]} and the set of index names."""
    db = sqlite3.connect(path)
    try:
        tables = sorted(r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
            " AND name != 'sqlite_sequence'"))
        columns = {t: [(r[1], r[2].upper(), r[5]) for r in db.execute(
            f"PRAGMA table_info({t})")] for t in tables}
        indexes = {r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='index'"
            " AND name NOT LIKE 'sqlite_autoindex%'")}
        version = db.execute("SELECT version FROM version").fetchall()
        return columns, indexes, version
    finally:
        db.close()


class Layout(unittest.TestCase):
    def tmp(self):
        return os.path.abspath(self.mktemp())

    def open_store(self, channel, usage):
        store = SQLiteStore(MemoryReactorClock(), channel, usage)
        self.addCleanup(store.close)
        return store

    def test_same_tables_as_reference(self):
        """A new channel database has the reference's channel-v1 tables,
        columns and indexes, and a new usage database its usage-v2 ones."""
        channel, usage = self.tmp(), self.tmp()
        self.open_store(channel, usage)
        ref_channel, ref_usage = self.tmp(), self.tmp()
        _reference_db(ref_channel, "channel-v1.sql", 1).close()
        _reference_db(ref_usage, "usage-v2.sql", 2).close()
        self.assertEqual(_layout(channel), _layout(ref_channel))
        self.assertEqual(_layout(usage), _layout(ref_usage))

    def test_usage_v1_upgraded_with_backup(self):
        """A reference usage database of version 1 is upgraded in place to
        version 2 (rows kept); a copy of the v1 file is kept beside it."""
        usage = self.tmp()
        db = _reference_db(usage, "usage-v1.sql", 1)
        db.execute("INSERT INTO mailboxes VALUES ('app', 1, 10, 5, 2,"
                   " 'happy')")
        db.commit()
        db.close()
        self.open_store(self.tmp(), usage)
        ref_v2 = self.tmp()
        _reference_db(ref_v2, "usage-v2.sql").close()
        self.assertEqual(_layout(usage)[:2], _layout(ref_v2)[:2])
        self.assertEqual(_layout(usage)[2], [(2,)])
        db = sqlite3.connect(usage)
        self.assertEqual(db.execute("SELECT app_id, result FROM mailboxes")
                         .fetchall(), [("app", "happy")])
        db.close()
        backup = sqlite3.connect(usage + "-backup-v1")
        self.assertEqual(backup.execute("SELECT version FROM version")
                         .fetchall(), [(1,)])
        backup.close()

    def test_earlier_usage_table_converted(self):
        """The single `usage` table an earlier wormhole-twisted wrote is
        moved into `nameplates` and `mailboxes`."""
        usage = self.tmp()
        db = sqlite3.connect(usage)
        db.execute("CREATE TABLE usage (kind TEXT, app_id TEXT, started"
                   " REAL, waiting_time REAL, total_time REAL, result TEXT)")
        db.execute("INSERT INTO usage VALUES ('mailbox','a',1,2,3,'scary')")
        db.execute("INSERT INTO usage VALUES ('nameplate','a',1,2,3,'happy')")
        db.commit()
        db.close()
        self.open_store(self.tmp(), usage)
        db = sqlite3.connect(usage)
        self.assertEqual(db.execute("SELECT result FROM mailboxes")
                         .fetchall(), [("scary",)])
        self.assertEqual(db.execute("SELECT result FROM nameplates")
                         .fetchall(), [("happy",)])
        db.close()
        self.assertTrue(os.path.exists(usage + "-backup-v0"))

    def test_unknown_channel_refused(self):
        """A channel database of another version, of an earlier
        wormhole-twisted, or of something else is refused, naming why."""
        cases = [
            ("CREATE TABLE schema_marker (name TEXT, version INTEGER)",
             "earlier wormhole-twisted"),
            ("CREATE TABLE other (x INTEGER)",
             "not a Mailbox server channel database"),
        ]
        for sql, words in cases:
            path = self.tmp()
            db = sqlite3.connect(path)
            db.execute(sql)
            db.commit()
            db.close()
            e = self.assertRaises(SchemaError, SQLiteStore,
                                  MemoryReactorClock(), path)
            self.assertIn(words, str(e))
        path = self.tmp()
        db = _reference_db(path, "channel-v1.sql", 7)
        db.commit()
        db.close()
        e = self.assertRaises(SchemaError, SQLiteStore, MemoryReactorClock(),
                              path)
        self.assertIn("channel database version 7", str(e))

    def test_unknown_usage_refused(self):
        """A usage database of an unknown version is refused and left as
        it was."""
        usage = self.tmp()
        db = _reference_db(usage, "usage-v2.sql", 3)
        db.commit()
        db.close()
        e = self.assertRaises(SchemaError, SQLiteStore, MemoryReactorClock(),
                              self.tmp(), usage)
        self.assertIn("version 3", str(e))
        self.assertEqual(_layout(usage)[2], [(3,)])

    def test_plugin_says_one_line(self):
        """`twistd wormhole-mailbox` on a foreign file stops with one line
        naming the file (SystemExit), not a traceback."""
        path = self.tmp()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE other (x INTEGER)")
        db.commit()
        db.close()
        config = Options()
        config.parseOptions(["--channel-db", path])
        e = self.assertRaises(SystemExit, makeService, config,
                              MemoryReactorClock())
        self.assertIn(path, str(e.code))
        self.assertTrue(str(e.code).startswith("wormhole-mailbox: "))
