# -*- test-case-name: tests.unit.ops.test_usage -*-
"""One home for the servers' usage code: the blurring rules, the writer
interface and every writer that does I/O, shared by the Mailbox server and
the Transit relay (the client never imports it).

Each finished session is blurred **once**, by the server's recorder
(``--blur-usage``), before any writer sees it: the writers write what they
are given.

Writers that touch a disk or a pipe (the relay's ``--usage-db``, JSON lines
on ``--log-fd``, the daily ``--usage-events`` files) are ``BatchWriter``s:
the reactor thread only appends to a bounded list; one worker thread of a
Twisted ``ThreadPool`` writes each batch (``deferToThreadPool``), so a slow
or full disk never stalls clients. A full list drops the item and counts it
(``dropped``); a failed batch is retried after each of ``retry_delays``
(scheduled on the reactor, never a sleep), then its items are counted as
``lost``. Both are logged (the 1st, 10th, 100th... time, and in total at
``close``). ``close`` returns a Deferred that fires once everything queued
is written and the thread is gone: services return it from
``stopService``, so shutdown waits without blocking the reactor.
"""

import json
import os
import sqlite3

from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from zope.interface import Interface, implementer

from .events import build_event, day_of

log = Logger(namespace="wormhole.ops.usage")


# blurring (--blur-usage): one rule per kind of figure

def blur_start(when, blur):
    """A start time rounded down to ``blur`` seconds."""
    return (when // blur) * blur if blur else when


def blur_duration(seconds):
    """A duration rounded to a coarse bucket: 1 s below 1 min, 10 s below
    10 min, 1 min below 1 h, else 10 min."""
    if seconds is None:
        return None
    for limit, step in ((60, 1), (600, 10), (3600, 60)):
        if seconds < limit:
            return round(seconds / step) * step
    return round(seconds / 600) * 600


def blur_bytes(n):
    """A byte count rounded to 10 kB below 1 MB, to 1 MB below 1 GB, else
    to 100 MB (a non-zero count never rounds to 0)."""
    if not n:
        return n
    for limit, step in ((1000 ** 2, 10 * 1000), (1000 ** 3, 1000 ** 2)):
        if n < limit:
            return max(step, round(n / step) * step)
    return round(n / (100 * 1000 ** 2)) * (100 * 1000 ** 2)


class IUsageWriter(Interface):
    """One place the relay's usage goes: memory, the SQLite ``--usage-db``,
    JSON lines on ``--log-fd``, or usage events."""

    def write_record(record):
        """``record`` is a dict: started, total_time, waiting_time,
        total_bytes, mood (already blurred)."""

    def write_current(rebooted, updated, connected, waiting,
                      incomplete_bytes):
        """The live counts (writers without such a place ignore it)."""

    def close():
        """Write what is queued and stop; returns a Deferred."""


class IUsageEventWriter(Interface):
    def write(kind, started, total_time, waiting_time, result, app_id=None,
              total_bytes=None, clients=()):
        """Queue one finished nameplate/mailbox/relay session."""

    def bound(app_id, side, client_version, when):
        """Queue one client's bind (kind ``bind``) at ``when``."""

    def close():
        """Write what is queued and stop; returns a Deferred."""


def _is_power_of_ten(n):
    while n and n % 10 == 0:
        n //= 10
    return n == 1


class BatchWriter:
    """The machinery every I/O writer shares (see the module docstring).
    Subclasses give ``_write_batch(items)`` and ``_release()``, both run
    on the worker thread."""

    def __init__(self, reactor, name, max_queue=100000,
                 retry_delays=(0.5, 2, 5)):
        self._reactor = reactor
        self._name = name
        self._max_queue = max_queue
        self._retry_delays = retry_delays
        self._items = []
        self._scheduled = None
        self._busy = False
        self._closed = False
        self._waiters = []
        self.dropped = 0
        self.lost = 0
        self._pool = ThreadPool(1, 1, name=name)
        self._pool.start()

    def _put(self, item):
        if self._closed or len(self._items) >= self._max_queue:
            self.dropped += 1
            if _is_power_of_ten(self.dropped):
                log.warn(  # noqa: G010 (twisted's Logger has no warning())
                    "{name}: the writer's queue is full (disk too slow?) or "
                    "closed; {dropped} items dropped so far",
                    name=self._name, dropped=self.dropped)
            return
        self._items.append(item)
        if not self._busy and self._scheduled is None:
            self._scheduled = self._reactor.callLater(0, self._flush)

    def _flush(self):
        self._scheduled = None
        items, self._items = self._items, []
        self._busy = True
        self._attempt(items).addCallback(self._flushed)

    @inlineCallbacks
    def _attempt(self, items):
        delays = list(self._retry_delays)
        while True:
            try:
                yield deferToThreadPool(self._reactor, self._pool,
                                        self._write_batch, items)
                return
            # any failure (a full disk, a closed descriptor, a bug): the
            # writer must go on, or its close() would never fire
            except Exception as e:  # noqa: BLE001
                if not delays:
                    self.lost += len(items)
                    log.error("{name}: {n} items lost, the write failed: "
                              "{error} ({lost} lost so far)",
                              name=self._name, n=len(items), error=str(e),
                              lost=self.lost)
                    return
                # a disk that filled up may have room again
                yield deferLater(self._reactor, delays.pop(0), lambda: None)

    def _flushed(self, _):
        self._busy = False
        if self._items:
            self._flush()
        elif self._closed:
            self._finish()

    def close(self):
        """Write what is queued, then stop; a Deferred that fires once done."""
        d = Deferred()
        self._waiters.append(d)
        if not self._closed:
            self._closed = True
            if self._scheduled is not None:
                self._scheduled.cancel()
                self._flush()
            elif not self._busy:
                self._finish()
        elif not self._busy and self._pool is None:
            self._fire()
        return d

    def _finish(self):
        d = deferToThreadPool(self._reactor, self._pool, self._release)
        d.addBoth(self._stopped)

    def _stopped(self, result):
        # the worker is idle now: stopping the pool joins it at once
        pool, self._pool = self._pool, None
        pool.stop()
        if self.dropped or self.lost:
            log.warn(  # noqa: G010 (twisted's Logger has no warning())
                "{name}: {dropped} dropped (queue full) and {lost} lost "
                     "(write failed) in all", name=self._name,
                     dropped=self.dropped, lost=self.lost)
        self._fire()

    def _fire(self):
        waiters, self._waiters = self._waiters, []
        for d in waiters:
            d.callback(None)

    def _write_batch(self, items):
        raise NotImplementedError

    def _release(self):
        pass


class DailyFiles:
    """Appends lines to ``<directory>/<prefix>-<day>.jsonl``; a new day
    closes the old file. Used only by the worker thread."""

    def __init__(self, directory, prefix):
        self._dir = directory
        self._prefix = prefix
        self._day = None
        self._f = None
        os.makedirs(directory, exist_ok=True)

    def path_for(self, day):
        """The file of ``day``: ``<directory>/<prefix>-<day>.jsonl``."""
        return os.path.join(self._dir, f"{self._prefix}-{day}.jsonl")

    def append(self, day, lines):
        """Append ``lines`` to ``day``'s file (closing the previous day's)."""
        if day != self._day:
            self.close()
            self._f = open(  # noqa: SIM115 (kept open for the day)
                self.path_for(day), "a", encoding="utf-8")
            self._day = day
        self._f.write("".join(lines))
        self._f.flush()

    def close(self):
        """Close the open day file, if any."""
        if self._f is not None:
            self._f.close()
            self._f = None
            self._day = None


@implementer(IUsageEventWriter)
class EventWriter(BatchWriter):
    """Daily JSON-lines usage events (``--usage-events``,
    docs/usage-events.md) for the analytics pipeline. ``clock`` picks the
    UTC day file; ``server_id`` names this server in every event."""

    def __init__(self, reactor, directory, server_id, clock=None,
                 prefix="usage-events", **kwargs):
        super().__init__(reactor, f"usage events ({prefix})", **kwargs)
        self._clock = clock or reactor
        self._server_id = server_id
        self._files = DailyFiles(directory, prefix)

    def write(self, kind, started, total_time, waiting_time, result,
              app_id=None, total_bytes=None, clients=()):
        """Queue one usage event (docs/usage-events.md) for today's file."""
        event = build_event(self._server_id, kind, started, total_time,
                            waiting_time, result, app_id, total_bytes,
                            clients)
        self._put((day_of(self._clock.seconds()),
                   json.dumps(event, separators=(",", ":")) + "\n"))

    def bound(self, app_id, side, client_version, when):
        """A client bound (docs/usage-events.md): one ``bind`` event."""
        self.write("bind", when, None, None, None, app_id=app_id,
                   clients=[(side, client_version)])

    def _write_batch(self, items):
        # consecutive runs of lines that go to the same day's file
        day, lines = None, []
        for d, line in items:
            if d != day and lines:
                self._files.append(day, lines)
                lines = []
            day = d
            lines.append(line)
        if lines:
            self._files.append(day, lines)

    def _release(self):
        self._files.close()


@implementer(IUsageWriter)
class JSONLinesWriter(BatchWriter):
    """One JSON object per finished session, a line each (``--log-fd``)."""

    def __init__(self, reactor, fileobj, **kwargs):
        super().__init__(reactor, "usage log", **kwargs)
        self._f = fileobj

    @classmethod
    def from_fd(cls, reactor, fd, **kwargs):
        """A writer to the open file descriptor ``fd`` (``--log-fd``)."""
        return cls(reactor, os.fdopen(fd, "w", buffering=1), **kwargs)

    def write_record(self, record):
        """Queue ``record`` as one JSON line."""
        self._put(json.dumps(record) + "\n")

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        """Live counts are not written as JSON lines: ignored."""
        pass

    def _write_batch(self, lines):
        self._f.write("".join(lines))
        self._f.flush()


@implementer(IUsageWriter)
class RelayEvents:
    """The relay's records as ``relay`` usage events."""

    def __init__(self, writer):
        self._writer = IUsageEventWriter(writer)

    def write_record(self, record):
        """One ``relay`` event for a finished relay connection's record."""
        self._writer.write("relay", record["started"], record["total_time"],
                           record["waiting_time"], record["mood"],
                           total_bytes=record["total_bytes"])

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        """Ignored: live counts are not events."""
        pass  # live counts are not events

    def close(self):
        """Close the event writer (a Deferred)."""
        return self._writer.close()


class MailboxEvents:
    """The Mailbox server's usage records and binds as usage events."""

    def __init__(self, writer):
        self._writer = IUsageEventWriter(writer)

    def record(self, record):
        """One event for a finished nameplate's or mailbox's usage record."""
        self._writer.write(record["kind"], record["started"],
                           record["total_time"], record["waiting_time"],
                           record["result"], app_id=record.get("app_id"))

    def bound(self, app_id, side, client_version, when):
        """A client bound: one ``bind`` event."""
        self._writer.bound(app_id, side, client_version, when)

    def counts(self):
        """(dropped, lost) events so far."""
        return self._writer.dropped, self._writer.lost

    def close(self):
        """Close the event writer (a Deferred)."""
        return self._writer.close()


# the Transit relay's --usage-db

_SCHEMA = """
CREATE TABLE `version` (`version` INTEGER);
CREATE TABLE `current` (
 `rebooted` INTEGER, `updated` INTEGER, `connected` INTEGER,
 `waiting` INTEGER, `incomplete_bytes` INTEGER);
CREATE TABLE `usage` (
 `started` INTEGER, `total_time` INTEGER, `waiting_time` INTEGER,
 `total_bytes` INTEGER, `result` VARCHAR);
CREATE INDEX `usage_started_index` ON `usage` (`started`);
CREATE INDEX `usage_result_index` ON `usage` (`result`);
INSERT INTO `version` VALUES (1);
"""
_TABLES = {"version", "current", "usage"}


class SchemaError(ValueError):
    """A ``--usage-db`` this relay cannot use; the message says why."""


def _open_usage_db(path):
    """A new file gets the reference relay's version 1 tables; a file of
    that layout (the reference's own, or ours) is used in place; anything
    else is refused, untouched."""
    # used by the writer's one worker thread after this check
    db = sqlite3.connect(path, check_same_thread=False)
    try:
        tables = {r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            db.executescript(_SCHEMA)
            return db
        version = None
        if "version" in tables:
            rows = db.execute("SELECT version FROM version").fetchall()
            version = rows[0][0] if len(rows) == 1 else None
        if tables == _TABLES and version == 1:
            return db
    except BaseException:
        db.close()
        raise
    db.close()
    raise SchemaError(
        f"{path}: not a Transit relay usage database this relay knows "
        f"(version {version!r}, tables: {', '.join(sorted(tables))}); it "
        "knows version 1, that of the reference magic-wormhole-transit-relay "
        "0.5: give --usage-db another file")


@implementer(IUsageWriter)
class RelaySQLiteWriter(BatchWriter):
    """The Transit relay's ``--usage-db`` file: the reference relay's
    version 1 layout (the mood goes in column ``result``), so its munin
    plugins and queries work. The file is checked (and refused) at once;
    rows are written by the worker thread, a batch per commit."""

    def __init__(self, reactor, path, **kwargs):
        # on the reactor thread, once, at start-up: a refusal stops the
        # relay before it listens
        self._db = _open_usage_db(path)
        super().__init__(reactor, "relay usage database", **kwargs)

    def _write_batch(self, items):
        db = self._db
        for sql, params in items:
            db.execute(sql, params)
        db.commit()

    def _release(self):
        self._db.close()

    def write_record(self, record):
        """Queue ``record`` as one row of the ``usage`` table."""
        self._put((
            "INSERT INTO usage (started, total_time, waiting_time,"
            " total_bytes, result) VALUES (?,?,?,?,?)",
            (record["started"], record["total_time"],
             record["waiting_time"], record["total_bytes"], record["mood"])))

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        """Replace the ``current`` table's one row with these counts."""
        # the table holds one row: the latest counts
        self._put(("DELETE FROM current", ()))
        self._put((
            "INSERT INTO current (rebooted, updated, connected, waiting,"
            " incomplete_bytes) VALUES (?,?,?,?,?)",
            (rebooted, updated, connected, waiting, incomplete_bytes)))
