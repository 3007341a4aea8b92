# -*- test-case-name: tests.unit.server.test_store -*-
"""Where the model's changes go: memory only, or SQLite with group commit.

Mailbox server protocol, "Persistence": every message is stored and "the server will not send
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
from ._schema import prepare_channel_db, prepare_usage_db

log = Logger()

_EMPTY_ROWS = ("nameplates", "nameplate_sides", "mailboxes", "mailbox_sides",
               "messages")


class _Recorder:
    """Turns model changes into SQL rows; subclasses decide what to do."""

    failing = False  # only a database can fail to commit

    def _op(self, sql, params):
        raise NotImplementedError

    # The tables are the reference server's (``_schema``): sides point at
    # their nameplate by its row id, and a mailbox's row keeps its creation
    # time in ``updated``.

    def nameplate_created(self, app_id, name, mailbox_id, when):
        self.nameplate_deleted(app_id, name)
        self._op("INSERT INTO nameplates (app_id, name, mailbox_id)"
                 " VALUES (?,?,?)", (app_id, name, mailbox_id))

    def nameplate_side(self, app_id, name, side, claimed, added):
        self._op("DELETE FROM nameplate_sides WHERE side=? AND nameplates_id"
                 " IN (SELECT id FROM nameplates WHERE app_id=? AND name=?)",
                 (side, app_id, name))
        self._op("INSERT INTO nameplate_sides (nameplates_id, claimed, side,"
                 " added) SELECT id, ?, ?, ? FROM nameplates"
                 " WHERE app_id=? AND name=?",
                 (int(claimed), side, added, app_id, name))

    def nameplate_deleted(self, app_id, name):
        self._op("DELETE FROM nameplate_sides WHERE nameplates_id IN"
                 " (SELECT id FROM nameplates WHERE app_id=? AND name=?)",
                 (app_id, name))
        self._op("DELETE FROM nameplates WHERE app_id=? AND name=?",
                 (app_id, name))

    def mailbox_created(self, app_id, mailbox_id, for_nameplate, when):
        self._op("INSERT OR REPLACE INTO mailboxes (app_id, id, updated,"
                 " for_nameplate) VALUES (?,?,?,?)",
                 (app_id, mailbox_id, when, int(for_nameplate)))

    def mailbox_side(self, app_id, mailbox_id, side, opened, added, mood):
        self._op("DELETE FROM mailbox_sides WHERE mailbox_id=? AND side=?",
                 (mailbox_id, side))
        self._op("INSERT INTO mailbox_sides (mailbox_id, opened, side, added,"
                 " mood) VALUES (?,?,?,?,?)",
                 (mailbox_id, int(opened), side, added, mood))

    def mailbox_deleted(self, app_id, mailbox_id):
        self._op("DELETE FROM mailboxes WHERE app_id=? AND id=?",
                 (app_id, mailbox_id))
        self._op("DELETE FROM mailbox_sides WHERE mailbox_id=?",
                 (mailbox_id,))
        self._op("DELETE FROM messages WHERE app_id=? AND mailbox_id=?",
                 (app_id, mailbox_id))

    def message_added(self, app_id, mailbox_id, message):
        self._op("INSERT INTO messages VALUES (?,?,?,?,?,?,?)",
                 (app_id, mailbox_id, message.side, message.phase,
                  message.body, message.server_rx, message.msg_id))

    def usage_added(self, record):
        pass

    def client_version_added(self, app_id, side, connect_time,
                             implementation, version):
        pass

    def usage_current(self, rebooted, updated, blur_time, connections):
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
    """The channel database, with the usage database attached as
    ``usage``: one connection, so a usage row commits with the change that
    made it. Raises ``SchemaError`` for a file of another layout."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        if path != ":memory:":
            # WAL + synchronous=FULL: a commit is durable once it returns,
            # and costs one fsync of the log (Mailbox server protocol, "Persistence").
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
        prepare_channel_db(db, path)
        if usage_path is not None:
            db.execute("ATTACH DATABASE ? AS usage", (usage_path,))
            if usage_path != ":memory:":
                db.execute("PRAGMA usage.journal_mode=WAL")
            prepare_usage_db(db, usage_path)
    except BaseException:
        db.close()
        raise
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
        # the last commit failed: answers are withheld (/health says so)
        self.failing = False

    def _op(self, sql, params):
        self._ops.append((sql, params))
        if self._scheduled is None and not self._in_flight:
            self._scheduled = self._reactor.callLater(self._window,
                                                      self._flush)

    def usage_added(self, record):
        if not self._has_usage:
            return
        if record["kind"] == "nameplate":
            self._op("INSERT INTO usage.nameplates (app_id, started,"
                     " waiting_time, total_time, result) VALUES (?,?,?,?,?)",
                     (record["app_id"], record["started"],
                      record["waiting_time"], record["total_time"],
                      record["result"]))
        else:
            self._op("INSERT INTO usage.mailboxes (app_id, for_nameplate,"
                     " started, total_time, waiting_time, result)"
                     " VALUES (?,?,?,?,?,?)",
                     (record["app_id"], record.get("for_nameplate"),
                      record["started"], record["total_time"],
                      record["waiting_time"], record["result"]))

    def client_version_added(self, app_id, side, connect_time,
                             implementation, version):
        if self._has_usage:
            self._op("INSERT INTO usage.client_versions VALUES (?,?,?,?,?)",
                     (app_id, side, connect_time, implementation, version))

    def usage_current(self, rebooted, updated, blur_time, connections):
        """The one row of ``current`` (what the munin plugins read first:
        they treat a row older than 6 minutes as a dead server)."""
        if self._has_usage:
            self._op("DELETE FROM usage.current", ())
            self._op("INSERT INTO usage.current VALUES (?,?,?,?)",
                     (rebooted, updated, blur_time, connections))

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
        self.failing = False
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
        self.failing = True
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
            # the reference keeps no creation time for a nameplate: its
            # first side's arrival stands in (None: the model uses "now")
            "nameplates": db.execute(
                "SELECT app_id, name, mailbox_id, (SELECT MIN(added) FROM"
                " nameplate_sides WHERE nameplates_id=n.id)"
                " FROM nameplates n ORDER BY id").fetchall(),
            "nameplate_sides": db.execute(
                "SELECT n.app_id, n.name, s.side, s.claimed, s.added"
                " FROM nameplate_sides s JOIN nameplates n"
                " ON s.nameplates_id=n.id").fetchall(),
            # the reference's `updated` is the last activity; the first
            # side's arrival, when earlier, is closer to the creation
            "mailboxes": db.execute(
                "SELECT app_id, id, for_nameplate, MIN(updated, COALESCE("
                "(SELECT MIN(added) FROM mailbox_sides WHERE mailbox_id=m.id),"
                " updated)) FROM mailboxes m").fetchall(),
            "mailbox_sides": db.execute(
                "SELECT m.app_id, s.mailbox_id, s.side, s.opened, s.added,"
                " s.mood FROM mailbox_sides s JOIN mailboxes m"
                " ON s.mailbox_id=m.id").fetchall(),
            "messages": db.execute(
                "SELECT app_id, mailbox_id, side, phase, body, server_rx,"
                " msg_id FROM messages ORDER BY rowid").fetchall(),
        }

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
