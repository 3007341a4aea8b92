# -*- test-case-name: tests.unit.relay.test_usage -*-
"""Usage records of the Transit relay: the recorder.

One record per finished pair (mood ``happy``) or unpaired connection (the
other moods, see ``_connection``): ``started``, ``total_time``,
``waiting_time`` (None when never paired), ``total_bytes`` (both
directions) and ``mood``. The recorder counts it for ``--metrics``, blurs
it once (``--blur-usage``: the start rounded down to N seconds, the size
to a coarse scale, ``wormhole_ops.usage``), logs it and hands it to its
writers, which live in ``wormhole_ops.usage`` with the Mailbox server's:
the SQLite ``--usage-db``, JSON lines on ``--log-fd``, usage events. It
keeps recent records in memory.
"""

import collections

from twisted.internet.defer import DeferredList
from zope.interface import implementer

from wormhole_ops.logs import log_session
from wormhole_ops.usage import IUsageWriter, blur_bytes, blur_start

from ._interfaces import IUsageRecorder


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
            started = blur_start(started, self._blur)
            total_bytes = blur_bytes(total_bytes)
        record = {"started": started, "total_time": total_time,
                  "waiting_time": waiting_time, "total_bytes": total_bytes,
                  "mood": mood}
        log_session("relay", record)
        for w in self._writers:
            w.write_record(record)

    def update_current(self, connected, waiting, incomplete_bytes):
        if self._blur:
            incomplete_bytes = blur_bytes(incomplete_bytes)
        now = self._clock.seconds()
        for w in self._writers:
            w.write_current(self.rebooted, now, connected, waiting,
                            incomplete_bytes)

    def records(self):
        return self._memory.records()

    def close(self):
        """Every writer's queue written; fires when all are done."""
        return DeferredList([w.close() for w in self._writers],
                            consumeErrors=True)


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
        from twisted.internet.defer import succeed
        return succeed(None)
