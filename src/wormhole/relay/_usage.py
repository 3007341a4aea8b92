# -*- test-case-name: tests.relay.test_usage -*-
"""Usage records of the Transit relay, and where they go.

One record per finished pair (mood ``happy``) or unpaired connection (the
other moods, see ``_connection``): ``started``, ``total_time``,
``waiting_time`` (None when never paired), ``total_bytes`` (both
directions) and ``mood``. The recorder keeps recent ones in memory and
hands each to its writers: the SQLite ``--usage-db`` (tables ``usage`` and
``current``, the column names the reference relay's operators already
query) and JSON lines on ``--log-fd``. ``--blur-usage=N`` rounds
``started`` down to N seconds and the sizes to a coarse scale, so records
cannot be matched with network logs.
"""

import collections
import json
import os
import sqlite3

from zope.interface import implementer

from .._ops.logs import log_session
from ._interfaces import IUsageRecorder, IUsageWriter


def blur_size(n):
    """Round a byte count: to 10 kB below 1 MB, to 1 MB below 1 GB, else
    to 100 MB."""
    if n == 0:
        return 0
    for limit, step in ((1000 ** 2, 10 * 1000), (1000 ** 3, 1000 ** 2)):
        if n < limit:
            return max(step, round(n / step) * step)
    return round(n / (100 * 1000 ** 2)) * (100 * 1000 ** 2)


@implementer(IUsageRecorder)
class UsageRecorder:
    def __init__(self, clock, writers=(), blur=None, keep=100000,
                 metrics=None):
        self._clock = clock
        self._metrics = metrics
        self._memory = MemoryWriter(keep)
        self._writers = [self._memory] + [IUsageWriter(w) for w in writers]
        self._blur = blur
        self.rebooted = clock.seconds()

    def record(self, started, total_time, waiting_time, total_bytes, mood):
        if self._metrics is not None:
            self._metrics.record(total_bytes, mood)
        if self._blur:
            started = (started // self._blur) * self._blur
            total_bytes = blur_size(total_bytes)
        record = {"started": started, "total_time": total_time,
                  "waiting_time": waiting_time, "total_bytes": total_bytes,
                  "mood": mood}
        log_session("relay", record)
        for w in self._writers:
            w.write_record(record)

    def update_current(self, connected, waiting, incomplete_bytes):
        if self._blur:
            incomplete_bytes = blur_size(incomplete_bytes)
        now = self._clock.seconds()
        for w in self._writers:
            w.write_current(self.rebooted, now, connected, waiting,
                            incomplete_bytes)

    def records(self):
        return self._memory.records()

    def close(self):
        for w in self._writers:
            w.close()


@implementer(IUsageWriter)
class MemoryWriter:
    """The most recent ``keep`` records, for tests and ``usage()``."""

    def __init__(self, keep=100000):
        self._records = collections.deque(maxlen=keep)
        self.current = None

    def write_record(self, record):
        self._records.append(record)

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        self.current = (rebooted, updated, connected, waiting,
                        incomplete_bytes)

    def records(self):
        return list(self._records)

    def close(self):
        pass


@implementer(IUsageWriter)
class JSONLogWriter:
    """One JSON object per line, flushed at once (``--log-fd``)."""

    def __init__(self, fileobj):
        self._f = fileobj

    @classmethod
    def from_fd(cls, fd):
        return cls(os.fdopen(fd, "w", buffering=1))

    def write_record(self, record):
        self._f.write(json.dumps(record) + "\n")
        self._f.flush()

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        pass

    def close(self):
        try:
            self._f.flush()
        except (OSError, ValueError):
            pass


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
    db = sqlite3.connect(path)
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
class SQLiteWriter:
    """The ``--usage-db`` file: schema version 1, the layout the
    reference relay's tools read (the mood goes in column ``result``).
    Each record is committed when written: one commit per finished pair
    or connection, never per byte."""

    def __init__(self, path):
        self._db = _open_usage_db(path)

    def write_record(self, record):
        self._db.execute(
            "INSERT INTO usage (started, total_time, waiting_time,"
            " total_bytes, result) VALUES (?,?,?,?,?)",
            (record["started"], record["total_time"],
             record["waiting_time"], record["total_bytes"], record["mood"]))
        self._db.commit()

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        # the table holds one row: the latest counts
        self._db.execute("DELETE FROM current")
        self._db.execute(
            "INSERT INTO current (rebooted, updated, connected, waiting,"
            " incomplete_bytes) VALUES (?,?,?,?,?)",
            (rebooted, updated, connected, waiting, incomplete_bytes))
        self._db.commit()

    def close(self):
        self._db.close()
