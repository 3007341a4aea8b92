# -*- test-case-name: tests.analytics.test_usage_events -*-
"""Usage events: one JSON object per line, for the analytics pipeline.

The Mailbox server and the Transit relay each hand every finished
nameplate, mailbox and relay session to an ``EventWriter``; the schema is
documented (and versioned) in ``docs/usage-events.md``.

Three promises, each from issue 6 "Usage events":

- **never block the reactor**: ``write`` only builds a line and puts it on
  a bounded queue; one daemon thread opens, appends to and rotates the
  files. A full queue drops the event and counts it (``dropped``), because a
  slow disk must not stall clients. A failed append (disk full, folder
  gone) is retried a few times, then its lines are counted as ``lost``;
  the thread keeps going. Both are logged (on the reactor thread, at the
  next ``write``, the 1st, 10th, 100th... time) and summed up at
  ``close``, so an operator sees that the analytics miss events.
- **daily files**: ``<prefix>-YYYY-MM-DD.jsonl`` by the UTC day the event
  was written, so finished days are immutable and the ingest job can skip
  files it has already read.
- **privacy**: the event is built from a fixed list of fields, so nothing
  the caller adds by accident (an IP address, a peer string) is written;
  ``blur`` rounds the start down to ``blur`` seconds, and times and sizes
  to coarse buckets, like the reference servers' ``--blur-usage``.
"""

import collections
import datetime
import json
import os
import queue
import threading
import time

from twisted.logger import Logger
from zope.interface import Interface, implementer

from .relay._interfaces import IUsageWriter as _IRelayUsageWriter

SCHEMA_VERSION = 1

MAILBOX_RESULTS = ("happy", "lonely", "scary", "errory", "pruney",
                   "crowded", "quiet")
# "empty": a connection that closed (or timed out) before a whole
# handshake line, as both relays record it (docs/relay.md)
RELAY_RESULTS = ("happy", "lonely", "errory", "impatient", "redundant",
                 "jilted", "empty")
# "bind" is one client's bind (spec 003 "bind": side and client_version):
# the version shares come from these, deduplicated by side
KINDS = ("nameplate", "mailbox", "relay", "bind")


class IUsageEventWriter(Interface):
    def write(kind, started, total_time, waiting_time, result, app_id=None,
              total_bytes=None, clients=()):
        """Queue one finished nameplate/mailbox/relay session."""

    def bound(app_id, side, client_version):
        """Queue one client's bind (kind ``bind``)."""

    def close():
        """Write what is queued and stop the writer thread."""


def blur_time(seconds):
    """A duration rounded to a coarse bucket: 1 s below 1 min, 10 s below
    10 min, 1 min below 1 h, else 10 min."""
    if seconds is None:
        return None
    for limit, step in ((60, 1), (600, 10), (3600, 60)):
        if seconds < limit:
            return round(seconds / step) * step
    return round(seconds / 600) * 600


def blur_bytes(n):
    """A byte count rounded to 2 significant digits (0 stays 0), so a
    transfer's size cannot be matched with a network log."""
    if not n:
        return n
    digits = len(str(int(n)))
    step = 10 ** max(0, digits - 2)
    return max(step, round(n / step) * step)


def _client(side, version):
    """One ``{"side", "impl", "version"}`` from a bind's ``side`` and
    ``client_version`` (spec 003 "bind": ``[implementation, version]``);
    anything else in ``version`` is ignored, not trusted."""
    impl = ver = None
    if isinstance(version, (list, tuple)) and len(version) == 2:
        impl, ver = (str(v)[:64] for v in version)
    return {"side": None if side is None else str(side)[:64],
            "impl": impl, "version": ver}


def build_event(server_id, kind, started, total_time, waiting_time, result,
                app_id=None, total_bytes=None, clients=(), blur=None):
    """The event as a dict of exactly the documented fields."""
    if blur:
        started = (int(started) // blur) * blur
        total_time = blur_time(total_time)
        waiting_time = blur_time(waiting_time)
        total_bytes = blur_bytes(total_bytes)
    return {
        "v": SCHEMA_VERSION,
        "server": server_id,
        "kind": kind,
        "app_id": app_id,
        "started": started,
        "waiting_time": waiting_time,
        "total_time": total_time,
        "result": result,
        "bytes": total_bytes,
        "clients": [_client(side, version) for side, version in clients],
    }


def day_of(seconds):
    return datetime.datetime.fromtimestamp(
        seconds, datetime.timezone.utc).strftime("%Y-%m-%d")


class DailyFiles:
    """Appends lines to ``<directory>/<prefix>-<day>.jsonl``; a new day
    closes the old file. Synchronous: called only from the writer thread
    (or directly in tests)."""

    def __init__(self, directory, prefix):
        self._dir = directory
        self._prefix = prefix
        self._day = None
        self._f = None
        os.makedirs(directory, exist_ok=True)

    def path_for(self, day):
        return os.path.join(self._dir, f"{self._prefix}-{day}.jsonl")

    def append(self, day, lines):
        if day != self._day:
            self.close()
            self._f = open(  # noqa: SIM115 (kept open for the day)
                self.path_for(day), "a", encoding="utf-8")
            self._day = day
        self._f.write("".join(lines))
        self._f.flush()

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None
            self._day = None


_STOP = object()


@implementer(IUsageEventWriter)
class EventWriter:
    """Queues events from the reactor thread; a daemon thread writes them.

    ``clock`` gives the time that picks the day file (an ``IReactorTime``);
    ``server_id`` names this server in every event (``--server-id``).
    """

    log = Logger()

    def __init__(self, clock, directory, server_id, prefix="usage-events",
                 blur=None, max_queue=100000, retry_delays=(0.5, 2, 5)):
        self._clock = clock
        self._server_id = server_id
        self._blur = blur
        self._files = DailyFiles(directory, prefix)
        self._queue = queue.Queue(maxsize=max_queue)
        self._retry_delays = retry_delays
        # events the full queue turned away, and lines whose append failed
        # (counted by the writer thread)
        self.dropped = 0
        self.lost = 0
        # the writer thread's failures, logged by the reactor thread
        # (deque appends and pops are thread-safe)
        self._failures = collections.deque()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="usage-events")
        self._thread.start()

    def write(self, kind, started, total_time, waiting_time, result,
              app_id=None, total_bytes=None, clients=()):
        event = build_event(self._server_id, kind, started, total_time,
                            waiting_time, result, app_id, total_bytes,
                            clients, self._blur)
        line = json.dumps(event, separators=(",", ":")) + "\n"
        self._report_failures()
        try:
            self._queue.put_nowait((day_of(self._clock.seconds()), line))
        except queue.Full:
            self.dropped += 1
            if _is_power_of_ten(self.dropped):
                self.log.warn(
                    "usage events: the writer's queue is full (disk too "
                    "slow?); {dropped} events dropped so far",
                    dropped=self.dropped)

    def _report_failures(self):
        while self._failures:
            n, error = self._failures.popleft()
            self.log.error(
                "usage events: {n} lines lost, the append failed: {error} "
                "({lost} lost so far)", n=n, error=error, lost=self.lost)

    def bound(self, app_id, side, client_version):
        self.write("bind", self._clock.seconds(), None, None, None,
                   app_id=app_id, clients=[(side, client_version)])

    def _run(self):
        while True:
            item = self._queue.get()
            batch = [item]
            # take whatever else is waiting: one write per burst, not per
            # event
            while len(batch) < 1000:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for day, group in _by_day(batch):
                self._append(day, group)
            if any(i is _STOP for i in batch):
                self._files.close()
                return

    def _append(self, day, lines):
        """Append, retrying a failed append after each of the delays (a
        disk that filled up may have room again); lines that still fail
        are counted as lost, and the file is reopened for the next."""
        for delay in (*self._retry_delays, None):
            try:
                self._files.append(day, lines)
                return
            except OSError as e:
                self._files.close()
                if delay is None:
                    self.lost += len(lines)
                    self._failures.append((len(lines), str(e)))
                    return
                time.sleep(delay)

    def close(self):
        """Flush and stop; blocks until the queue is written (call it at
        service shutdown). Logs what was dropped or lost, if anything."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        self._report_failures()
        if self.dropped or self.lost:
            self.log.warn(
                "usage events: {dropped} dropped (queue full) and {lost} "
                "lost (append failed) in all", dropped=self.dropped,
                lost=self.lost)


def _is_power_of_ten(n):
    while n and n % 10 == 0:
        n //= 10
    return n == 1


def _by_day(batch):
    """Consecutive runs of lines that go to the same day file."""
    day, group = None, []
    for item in batch:
        if item is _STOP:
            continue
        d, line = item
        if d != day and group:
            yield day, group
            group = []
        day = d
        group.append(line)
    if group:
        yield day, group


@implementer(_IRelayUsageWriter)
class RelayEvents:
    """The Transit relay's usage writer (``relay._interfaces.IUsageWriter``)
    that turns each relay record into a ``relay`` event. The relay's
    recorder has already blurred ``started`` and the size when
    ``--blur-usage`` is on."""

    def __init__(self, writer):
        self._writer = IUsageEventWriter(writer)

    def write_record(self, record):
        self._writer.write("relay", record["started"], record["total_time"],
                           record["waiting_time"], record["mood"],
                           total_bytes=record["total_bytes"])

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        pass  # live counts are not events

    def close(self):
        self._writer.close()


class MailboxEvents:
    """Feeds the Mailbox server's usage records (``server/_usage.py``
    ``UsageLog``) and binds (``server/_connection.py``) to a writer."""

    def __init__(self, writer):
        self._writer = IUsageEventWriter(writer)

    def record(self, record):
        self._writer.write(record["kind"], record["started"],
                           record["total_time"], record["waiting_time"],
                           record["result"], app_id=record.get("app_id"))

    def bound(self, app_id, side, client_version):
        self._writer.bound(app_id, side, client_version)

    def counts(self):
        """(dropped, lost) events so far."""
        return self._writer.dropped, self._writer.lost

    def close(self):
        self._writer.close()
