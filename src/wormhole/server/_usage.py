# -*- test-case-name: tests.server.test_usage -*-
"""Usage records: one per finished nameplate or mailbox.

Spec 003 "Mailboxes": the server records each mood (and `pruney`,
`crowded`) "so the server operator can get a sense of how many connections
are succeeding and failing". ``--blur-usage=N`` rounds the start time down
to N seconds and the durations to coarse buckets, so that the records cannot
be matched against network logs.
"""

import collections
import json
import os

from zope.interface import implementer

from .._ops.logs import log_session
from ._interfaces import IChannelStore, IUsageRecorder


def blur_duration(seconds):
    """Round a duration to a coarse bucket (1 s below 1 min, 10 s below
    10 min, 1 min below 1 h, else 10 min)."""
    if seconds is None:
        return None
    for limit, step in ((60, 1), (600, 10), (3600, 60)):
        if seconds < limit:
            return round(seconds / step) * step
    return round(seconds / 600) * 600


@implementer(IUsageRecorder)
class UsageLog:
    """Sends each record to the store (the ``--usage-db``) and, if given, as
    a JSON line to ``log_fd``; keeps the last ``keep`` in memory (None:
    all, for tests; the server keeps none: records made as clients leave
    would pin the allocator's arenas and keep their memory from the OS)."""

    def __init__(self, store, blur=None, log_fd=None, keep=0, metrics=None):
        self._store = IChannelStore(store)
        self._metrics = metrics
        self._blur = blur
        self._log_file = (os.fdopen(log_fd, "w", buffering=1)
                          if log_fd is not None else None)
        self.records = collections.deque(maxlen=keep)
        # issue 6: a ``wormhole._usage_events.MailboxEvents`` when the
        # operator asked for --usage-events
        self.events = None

    def record(self, record):
        if self._blur:
            record = dict(record)
            record["started"] = (record["started"] // self._blur) * self._blur
            record["waiting_time"] = blur_duration(record["waiting_time"])
            record["total_time"] = blur_duration(record["total_time"])
        self.records.append(record)
        log_session("mailbox", record)
        if self._metrics is not None:
            self._metrics.sessions.labels(record["kind"],
                                          record["result"]).inc()
        self._store.usage_added(record)
        if self._log_file is not None:
            self._log_file.write(json.dumps(record) + "\n")
        if self.events is not None:
            self.events.record(record)

    def _blur_time(self, when):
        return (when // self._blur) * self._blur if self._blur else when

    def bound(self, app_id, side, client_version, when):
        """One client's bind (spec 003 "bind": ``client_version`` is
        ``[implementation, version]``; anything else is kept as nulls)."""
        impl = version = None
        if isinstance(client_version, (list, tuple)) and \
                len(client_version) == 2:
            impl, version = (str(v)[:64] for v in client_version)
        self._store.client_version_added(app_id, side,
                                         self._blur_time(when), impl, version)
        if self.events is not None:
            self.events.bound(app_id, side, client_version)

    def events_lost(self):
        """(dropped, lost) usage events so far (0, 0 without
        --usage-events)."""
        if self.events is None:
            return 0, 0
        return self.events.counts()

    def current(self, rebooted, now, connections):
        """Refresh the usage database's ``current`` row."""
        self._store.usage_current(self._blur_time(rebooted), now, self._blur,
                                  connections)
