# -*- test-case-name: tests.unit.server.test_usage -*-
"""Usage records: one per finished nameplate or mailbox.

Mailbox server protocol, "Mailboxes": the server records each mood (and `pruney`,
`crowded`) "so the server operator can get a sense of how many connections
are succeeding and failing". ``--blur-usage=N`` rounds the start time down
to N seconds and the durations to coarse buckets, so that the records cannot
be matched against network logs.
"""

import collections

from twisted.internet.defer import DeferredList, succeed
from zope.interface import implementer

from wormhole_ops.logs import log_session
from wormhole_ops.usage import blur_duration, blur_start

from ._interfaces import IChannelStore, IUsageRecorder


@implementer(IUsageRecorder)
class UsageLog:
    """Blurs each record once (``--blur-usage``), counts it for the metrics,
    logs it, and sends it to the store (the ``--usage-db``), to
    ``log_writer`` (JSON lines on ``--log-fd``, a
    ``wormhole_ops.usage.JSONLinesWriter``) and to the usage events; keeps
    the last ``keep`` in memory (None: all, for tests; the server keeps
    none: records made as clients leave would pin the allocator's arenas
    and keep their memory from the OS)."""

    def __init__(self, store, blur=None, log_writer=None, keep=0,
                 metrics=None):
        self._store = IChannelStore(store)
        self._metrics = metrics
        self._log_writer = log_writer
        self._blur = blur
        self.records = collections.deque(maxlen=keep)
        # a ``wormhole_ops.usage.MailboxEvents`` when the operator asked
        # for --usage-events (docs/usage-events.md)
        self.events = None

    def record(self, record):
        if self._blur:
            record = dict(record)
            record["started"] = blur_start(record["started"], self._blur)
            record["waiting_time"] = blur_duration(record["waiting_time"])
            record["total_time"] = blur_duration(record["total_time"])
        self.records.append(record)
        log_session("mailbox", record)
        if self._metrics is not None:
            self._metrics.sessions.labels(record["kind"],
                                          record["result"]).inc()
        self._store.usage_added(record)
        if self._log_writer is not None:
            self._log_writer.write_record(record)
        if self.events is not None:
            self.events.record(record)

    def _blur_time(self, when):
        return blur_start(when, self._blur)

    def bound(self, app_id, side, client_version, when):
        """One client's bind (Mailbox server protocol, "Connection-Specific
        (Client-to-Server) Messages": ``client_version`` is
        ``[implementation, version]``; anything else is kept as nulls)."""
        impl = version = None
        if isinstance(client_version, (list, tuple)) and \
                len(client_version) == 2:
            impl, version = (str(v)[:64] for v in client_version)
        when = self._blur_time(when)
        self._store.client_version_added(app_id, side, when, impl, version)
        if self.events is not None:
            self.events.bound(app_id, side, client_version, when)

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

    def close(self):
        """The JSON lines and usage events written out; a Deferred."""
        writers = [w for w in (self._log_writer, self.events)
                   if w is not None]
        if not writers:
            return succeed(None)
        return DeferredList([w.close() for w in writers],
                            consumeErrors=True)
