# -*- test-case-name: tests.server.test_store -*-
"""Where the model's changes go: memory only, or SQLite with group commit.

Spec 003 "Persistence": every message is stored and "the server will not send
a direct response until any side-effects ... have been safely committed".
The reference commits (and fsyncs) once per state change on the reactor
thread. Here every change of a reactor turn is queued, one worker thread
writes the whole batch in one transaction (one fsync), and only then are the
outputs that were queued behind those changes released, in order. While one
batch commits, the next one collects: under load the batches grow and the
cost per change falls.
"""

from __future__ import annotations

import sqlite3

from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from zope.interface import implementer

from ._interfaces import IChannelStore

log = Logger()

SCHEMA_VERSION = 1

# Our own marker table: the reference server's database (same default file
# name, relay.sqlite) has other tables, and must not be mistaken for ours.
SCHEMA_NAME = "wormhole-twisted-mailbox"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_marker (name TEXT, version INTEGER);
CREATE TABLE IF NOT EXISTS nameplates (
  app_id TEXT, name TEXT, mailbox_id TEXT, created REAL,
  PRIMARY KEY (app_id, name));
CREATE TABLE IF NOT EXISTS nameplate_sides (
  app_id TEXT, name TEXT, side TEXT, claimed INTEGER, added REAL,
  PRIMARY KEY (app_id, name, side));
CREATE TABLE IF NOT EXISTS mailboxes (
  app_id TEXT, mailbox_id TEXT, for_nameplate INTEGER, created REAL,
  PRIMARY KEY (app_id, mailbox_id));
CREATE TABLE IF NOT EXISTS mailbox_sides (
  app_id TEXT, mailbox_id TEXT, side TEXT, opened INTEGER, added REAL,
  mood TEXT, PRIMARY KEY (app_id, mailbox_id, side));
CREATE TABLE IF NOT EXISTS messages (
  app_id TEXT, mailbox_id TEXT, side TEXT, phase TEXT, body TEXT,
  server_rx REAL, msg_id TEXT);
CREATE INDEX IF NOT EXISTS messages_idx ON messages (app_id, mailbox_id);
"""

_USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage.usage (
  kind TEXT, app_id TEXT, started REAL, waiting_time REAL, total_time REAL,
  result TEXT);
"""

_EMPTY_ROWS = ("nameplates", "nameplate_sides", "mailboxes", "mailbox_sides",
               "messages")


class _Recorder:
    """Turns model changes into SQL rows; subclasses decide what to do."""

    def _op(self, sql, params):
        raise NotImplementedError

    def nameplate_created(self, app_id, name, mailbox_id, when):
        self._op("INSERT OR REPLACE INTO nameplates VALUES (?,?,?,?)",
                 (app_id, name, mailbox_id, when))

    def nameplate_side(self, app_id, name, side, claimed, added):
        self._op("INSERT OR REPLACE INTO nameplate_sides VALUES (?,?,?,?,?)",
                 (app_id, name, side, int(claimed), added))

    def nameplate_deleted(self, app_id, name):
        self._op("DELETE FROM nameplates WHERE app_id=? AND name=?",
                 (app_id, name))
        self._op("DELETE FROM nameplate_sides WHERE app_id=? AND name=?",
                 (app_id, name))

    def mailbox_created(self, app_id, mailbox_id, for_nameplate, when):
        self._op("INSERT OR REPLACE INTO mailboxes VALUES (?,?,?,?)",
                 (app_id, mailbox_id, int(for_nameplate), when))

    def mailbox_side(self, app_id, mailbox_id, side, opened, added, mood):
        self._op("INSERT OR REPLACE INTO mailbox_sides VALUES (?,?,?,?,?,?)",
                 (app_id, mailbox_id, side, int(opened), added, mood))

    def mailbox_deleted(self, app_id, mailbox_id):
        for table in ("mailboxes", "mailbox_sides", "messages"):
            self._op(f"DELETE FROM {table} WHERE app_id=? AND mailbox_id=?",
                     (app_id, mailbox_id))

    def message_added(self, app_id, mailbox_id, message):
        self._op("INSERT INTO messages VALUES (?,?,?,?,?,?,?)",
                 (app_id, mailbox_id, message.side, message.phase,
                  message.body, message.server_rx, message.msg_id))

    def usage_added(self, record):
        pass


@implementer(IChannelStore)
class MemoryStore(_Recorder):
    """No persistence: everything is "committed" at once (``--channel-db``
    not given; also what the unit tests use)."""

    def _op(self, sql, params):
        pass

    def after_commit(self, fn, *args):
        fn(*args)

    def load(self):
        return {k: [] for k in _EMPTY_ROWS}

    def close(self):
        from twisted.internet.defer import succeed
        return succeed(None)


def _open_db(path, usage_path):
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    if path != ":memory:":
        # WAL + synchronous=FULL: a commit is durable once it returns, and
        # costs one fsync of the log (spec 003 "Persistence").
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
    tables = {r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table'")}
    if tables and "schema_marker" not in tables:
        db.close()
        raise ValueError(
            f"{path}: this database was not made by this server (perhaps by "
            "the reference magic-wormhole-mailbox-server); give "
            "--channel-db a new file name")
    db.executescript(_SCHEMA)
    row = db.execute("SELECT name, version FROM schema_marker").fetchone()
    if row is None:
        db.execute("INSERT INTO schema_marker VALUES (?, ?)",
                   (SCHEMA_NAME, SCHEMA_VERSION))
    elif row != (SCHEMA_NAME, SCHEMA_VERSION):
        db.close()
        raise ValueError(f"{path}: channel database schema {row[1]} of "
                         f"{row[0]!r}, this server knows only "
                         f"{SCHEMA_VERSION}")
    if usage_path is not None:
        db.execute("ATTACH DATABASE ? AS usage", (usage_path,))
        if usage_path != ":memory:":
            db.execute("PRAGMA usage.journal_mode=WAL")
        db.executescript(_USAGE_SCHEMA)
    return db


@implementer(IChannelStore)
class SQLiteStore(_Recorder):
    """SQLite on disk with group commit on one worker thread.

    ``commit_window`` (seconds) lets a batch collect for a little longer than
    one reactor turn; 0 means "the end of this turn".
    """

    def __init__(self, reactor, path, usage_path=None, commit_window=0.0):
        self._reactor = reactor
        self._db = _open_db(path, usage_path)
        self._has_usage = usage_path is not None
        self._window = commit_window
        self._ops = []
        self._outputs = []
        self._scheduled = None
        self._in_flight = False
        self._closing = None
        self._pool = ThreadPool(1, 1, name="mailbox-db")
        self._pool.start()
        self.commits = 0  # how many transactions so far (for tests, bench)

    def _op(self, sql, params):
        self._ops.append((sql, params))
        if self._scheduled is None and not self._in_flight:
            self._scheduled = self._reactor.callLater(self._window,
                                                      self._flush)

    def usage_added(self, record):
        if self._has_usage:
            self._op("INSERT INTO usage.usage VALUES (?,?,?,?,?,?)",
                     (record["kind"], record["app_id"], record["started"],
                      record["waiting_time"], record["total_time"],
                      record["result"]))

    def after_commit(self, fn, *args):
        if self._ops or self._in_flight or self._outputs:
            self._outputs.append((fn, args))
        else:
            fn(*args)

    def _commit(self, ops):
        # runs on the worker thread: the only user of self._db after load()
        db = self._db
        db.execute("BEGIN")
        try:
            for sql, params in ops:
                db.execute(sql, params)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _flush(self):
        self._scheduled = None
        ops, self._ops = self._ops, []
        outputs, self._outputs = self._outputs, []
        self._in_flight = True
        d = deferToThreadPool(self._reactor, self._pool, self._commit, ops)
        d.addCallbacks(self._committed, self._failed,
                       callbackArgs=(outputs,), errbackArgs=(outputs,))

    def _committed(self, _, outputs):
        self.commits += 1
        self._in_flight = False
        self._release(outputs)
        if self._ops:
            self._flush()
        elif self._outputs:
            outputs, self._outputs = self._outputs, []
            self._release(outputs)
        elif self._closing is not None:
            self._finish_close()

    def _failed(self, f, outputs):
        # Nothing held is released: answering would claim a durability we do
        # not have. The clients time out and reconnect.
        log.failure("mailbox database commit failed; {n} outputs withheld",
                    f, n=len(outputs))
        self._in_flight = False
        if self._ops or self._outputs:
            # try again with what came since (it may well work: a full
            # disk gets space back); what was withheld stays withheld
            self._flush()
        elif self._closing is not None:
            self._finish_close()

    def _release(self, outputs):
        for fn, args in outputs:
            try:
                fn(*args)
            except Exception:
                log.failure("error while sending a held output")

    def load(self):
        db = self._db
        return {
            "nameplates": db.execute(
                "SELECT app_id, name, mailbox_id, created FROM nameplates"
            ).fetchall(),
            "nameplate_sides": db.execute(
                "SELECT app_id, name, side, claimed, added"
                " FROM nameplate_sides").fetchall(),
            "mailboxes": db.execute(
                "SELECT app_id, mailbox_id, for_nameplate, created"
                " FROM mailboxes").fetchall(),
            "mailbox_sides": db.execute(
                "SELECT app_id, mailbox_id, side, opened, added, mood"
                " FROM mailbox_sides").fetchall(),
            "messages": db.execute(
                "SELECT app_id, mailbox_id, side, phase, body, server_rx,"
                " msg_id FROM messages ORDER BY rowid").fetchall(),
        }

    def usage_rows(self):
        """Every usage row (only when a usage database is attached)."""
        return self._db.execute(
            "SELECT kind, app_id, started, waiting_time, total_time, result"
            " FROM usage.usage ORDER BY rowid").fetchall()

    def close(self):
        from twisted.internet.defer import Deferred
        self._closing = Deferred()
        d = self._closing
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._flush()
        elif not self._in_flight:
            self._finish_close()
        return d

    def _finish_close(self):
        d, self._closing = self._closing, None
        if d is None:
            return
        self._pool.stop()
        self._db.close()
        d.callback(None)
