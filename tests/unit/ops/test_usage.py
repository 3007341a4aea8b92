"""The servers' shared usage code (wormhole_ops.usage): the blurring
rules, and the writers whose blocking I/O runs on a Twisted thread pool.
The writer tests use the real reactor (results come back from the worker
thread through it) and wait on ``close()``, never on time."""

import io
import json
import os

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import Clock, deferLater
from twisted.logger import LogLevel, globalLogPublisher
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_ops import usage as u

DAY1 = 1767225600  # 2026-01-01T00:00:00Z


def _read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class Blur(unittest.TestCase):
    def test_buckets(self):
        """One rule each: starts round down, durations to coarse buckets,
        sizes to 10 kB / 1 MB / 100 MB steps (never to 0)."""
        self.assertEqual(u.blur_start(DAY1 + 3599, 3600), DAY1)
        self.assertEqual(u.blur_start(5.5, None), 5.5)
        self.assertEqual([u.blur_duration(x) for x in
                          (None, 0.4, 126, 1000, 4000, 7300)],
                         [None, 0, 130, 1020, 4200, 7200])
        self.assertEqual([u.blur_bytes(x) for x in
                          (None, 0, 1, 2_345_678, 12_345_678_901)],
                         [None, 0, 10000, 2_000_000, 12_300_000_000])


def _failing_appends(writer, n):
    """The writer's next ``n`` appends fail as on a full disk; the list
    holds how many failures are left."""
    real = writer._files.append
    left = [n]

    def append(day, lines):
        if left[0]:
            left[0] -= 1
            raise OSError(28, "No space left on device")
        return real(day, lines)
    writer._files.append = append
    return left


class EventWriterTests(unittest.TestCase):
    def setUp(self):
        self.seen = []
        globalLogPublisher.addObserver(self.seen.append)
        self.addCleanup(globalLogPublisher.removeObserver, self.seen.append)

    def writer(self, clock=None, **kwargs):
        """A writer on the real reactor whose day comes from ``clock`` (by
        default a Clock at 0: the 1970-01-01 file)."""
        d = os.path.abspath(self.mktemp())
        return u.EventWriter(reactor, d, "srv", clock=clock or Clock(),
                             **kwargs), d

    @inlineCallbacks
    def test_writes_and_rotates_by_clock(self):
        """Events go to the file of the UTC day of the clock when written,
        one JSON object per line, written by the time close() fires."""
        clock = Clock()
        clock.advance(DAY1 + 86399)
        w, d = self.writer(clock)
        verifyObject(u.IUsageEventWriter, w)
        w.write("mailbox", DAY1 + 10, 5, 1, "happy", app_id="a")
        clock.advance(2)
        w.write("relay", DAY1 + 20, 7, 2, "happy", total_bytes=99)
        w.bound("a", "side1", ["python", "0.24"], DAY1 + 30)
        yield w.close()
        one = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        two = _read(os.path.join(d, "usage-events-2026-01-02.jsonl"))
        self.assertEqual([e["kind"] for e in one], ["mailbox"])
        self.assertEqual([e["kind"] for e in two], ["relay", "bind"])
        self.assertEqual((two[0]["bytes"], two[0]["server"]), (99, "srv"))
        self.assertEqual((two[1]["started"], two[1]["clients"]), (
            DAY1 + 30, [{"side": "side1", "impl": "python",
                         "version": "0.24"}]))

    @inlineCallbacks
    def test_full_queue_drops_not_blocks(self):
        """Past max_queue items waiting for the thread, write returns at
        once and counts the drop; drops are logged on the 1st and 10th."""
        w, d = self.writer(max_queue=2)
        for _ in range(12):
            w.write("relay", DAY1, 1, None, "lonely")
        self.assertEqual(w.dropped, 10)
        warnings = [e for e in self.seen if e["log_level"] == LogLevel.warn]
        self.assertEqual([e["dropped"] for e in warnings], [1, 10])
        yield w.close()
        self.assertEqual(len(_read(os.path.join(
            d, "usage-events-1970-01-01.jsonl"))), 2)

    @inlineCallbacks
    def test_failed_append_retried_then_counted_and_logged(self):
        """An append that keeps failing (disk full) is retried after each
        delay (on the reactor, no sleep), then its lines count as lost and
        are logged; later events are written."""
        w, d = self.writer(retry_delays=(0, 0))
        failures = _failing_appends(w, 3)
        w.write("relay", DAY1, 1, None, "lonely")
        # let the first batch leave: the next write makes a batch of its own
        yield deferLater(reactor, 0, lambda: None)
        w.write("relay", DAY1, 2, None, "happy")
        yield w.close()
        self.assertEqual(failures, [0])
        self.assertEqual((w.lost, w.dropped), (1, 0))
        [e] = _read(os.path.join(d, "usage-events-1970-01-01.jsonl"))
        self.assertEqual(e["result"], "happy")
        errors = [e for e in self.seen if e["log_level"] == LogLevel.error]
        self.assertEqual(len(errors), 1)
        self.assertIn("No space left", errors[0]["error"])
        summary = [e for e in self.seen if e["log_level"] == LogLevel.warn]
        self.assertEqual((summary[-1]["dropped"], summary[-1]["lost"]),
                         (0, 1))

    @inlineCallbacks
    def test_append_that_recovers_loses_nothing(self):
        """A failure that clears before the retries run out loses nothing
        and logs nothing."""
        w, d = self.writer(retry_delays=(0, 0))
        _failing_appends(w, 2)
        w.write("relay", DAY1, 1, None, "lonely")
        yield w.close()
        self.assertEqual((w.lost, len(_read(os.path.join(
            d, "usage-events-1970-01-01.jsonl")))), (0, 1))
        self.assertEqual([e for e in self.seen
                          if e["log_level"] >= LogLevel.warn], [])

    @inlineCallbacks
    def test_close_waits_and_leaves_no_thread(self):
        """close() fires only once everything is written, twice is fine,
        and the worker thread is gone afterwards."""
        w, d = self.writer()
        for i in range(100):
            w.write("relay", DAY1, i, None, "happy")
        first, second = w.close(), w.close()
        yield first
        yield second
        self.assertEqual(len(_read(os.path.join(
            d, "usage-events-1970-01-01.jsonl"))), 100)
        self.assertIsNone(w._pool)
        yield w.close()

    @inlineCallbacks
    def test_no_ip_address(self):
        """The writer has no parameter for an address: keyword arguments
        other than the documented ones are refused."""
        w, _ = self.writer()
        self.assertRaises(TypeError, w.write, "relay", 0, 1, None, "happy",
                          peer="127.0.0.1")
        yield w.close()


class Adapters(unittest.TestCase):
    @inlineCallbacks
    def test_relay_and_mailbox_events(self):
        """RelayEvents turns relay records into relay events (mood ->
        result, total_bytes -> bytes) and ignores live counts;
        MailboxEvents writes mailbox records and binds."""
        clock = Clock()
        clock.advance(DAY1)
        d = os.path.abspath(self.mktemp())
        a = u.RelayEvents(u.EventWriter(reactor, d, "r1", clock=clock))
        verifyObject(u.IUsageWriter, a)
        a.write_current(0, 0, 1, 2, 3)
        a.write_record({"started": DAY1, "total_time": 2.0,
                        "waiting_time": 1.0, "total_bytes": 42,
                        "mood": "happy"})
        m = u.MailboxEvents(u.EventWriter(reactor, d, "m1", clock=clock,
                                          prefix="m"))
        m.record({"kind": "mailbox", "app_id": "a", "started": DAY1,
                  "waiting_time": None, "total_time": 3.0,
                  "result": "lonely"})
        m.bound("a", "s1", ["python", "0.24"], DAY1)
        yield a.close()
        yield m.close()
        [e] = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        self.assertEqual((e["kind"], e["result"], e["bytes"], e["server"]),
                         ("relay", "happy", 42, "r1"))
        got = _read(os.path.join(d, "m-2026-01-01.jsonl"))
        self.assertEqual([(e["kind"], e["result"]) for e in got],
                         [("mailbox", "lonely"), ("bind", None)])
        self.assertEqual(m.counts(), (0, 0))


class AnyFailure(unittest.TestCase):
    @inlineCallbacks
    def test_unexpected_error_counted_and_close_fires(self):
        """A write that fails with something other than an OSError is
        counted as lost too, and close() still fires (a writer stuck on a
        failed batch would hang the server's shutdown)."""
        class Broken(u.JSONLinesWriter):
            def _write_batch(self, lines):
                raise TypeError("a bug")
        w = Broken(reactor, io.StringIO(), retry_delays=())
        w.write_record({"mood": "happy"})
        yield w.close()
        self.assertEqual(w.lost, 1)
