"""The JSON-lines usage-event writer (issue 6 "Usage events",
docs/usage-events.md)."""

import json
import os
import time

from twisted.internet.task import Clock
from twisted.logger import LogLevel, globalLogPublisher
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _usage_events as ue

DAY1 = 1767225600  # 2026-01-01T00:00:00Z


def _read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class BuildEvent(unittest.TestCase):
    def test_fields(self):
        """An event has exactly the documented fields, version first."""
        e = ue.build_event("s1", "mailbox", DAY1 + 5.5, 12.25, 3.0, "happy",
                           app_id="app", clients=[
                               ("aaa", ["python", "0.24"]), ("bbb", None)])
        self.assertEqual(list(e), ["v", "server", "kind", "app_id",
                                   "started", "waiting_time", "total_time",
                                   "result", "bytes", "clients"])
        self.assertEqual(e["v"], ue.SCHEMA_VERSION)
        self.assertEqual(e["clients"], [
            {"side": "aaa", "impl": "python", "version": "0.24"},
            {"side": "bbb", "impl": None, "version": None}])

    def test_client_version_not_trusted(self):
        """A client_version that is not a [impl, version] pair is dropped,
        and long strings are cut."""
        e = ue.build_event("s", "mailbox", 0, 1, None, "lonely", clients=[
            ("a" * 100, {"x": 1}), ("b", ["x" * 100, 3])])
        self.assertEqual(e["clients"][0],
                         {"side": "a" * 64, "impl": None, "version": None})
        self.assertEqual(e["clients"][1],
                         {"side": "b", "impl": "x" * 64, "version": "3"})

    def test_blur(self):
        """blur rounds the start down to the given seconds, and times and
        sizes to coarse buckets."""
        e = ue.build_event("s", "relay", DAY1 + 3599, 601.0, 37.4, "happy",
                           total_bytes=123456789, blur=3600)
        self.assertEqual(e["started"], DAY1)
        self.assertEqual(e["total_time"], 600)
        self.assertEqual(e["waiting_time"], 37)
        self.assertEqual(e["bytes"], 120000000)

    def test_blur_buckets(self):
        """The buckets of blur_time and blur_bytes."""
        self.assertEqual(ue.blur_time(None), None)
        self.assertEqual(ue.blur_time(0.4), 0)
        self.assertEqual(ue.blur_time(126), 130)
        self.assertEqual(ue.blur_time(1000), 1020)
        self.assertEqual(ue.blur_time(4000), 4200)
        self.assertEqual(ue.blur_bytes(None), None)
        self.assertEqual(ue.blur_bytes(0), 0)
        self.assertEqual(ue.blur_bytes(7), 7)
        self.assertEqual(ue.blur_bytes(1549), 1500)
        self.assertEqual(ue.blur_bytes(1551), 1600)


class DailyFilesTests(unittest.TestCase):
    def test_rotation(self):
        """Each day gets its own file; going back to a day appends."""
        d = self.mktemp()
        f = ue.DailyFiles(d, "ev")
        f.append("2026-01-01", ["a\n"])
        f.append("2026-01-02", ["b\n", "c\n"])
        f.append("2026-01-01", ["d\n"])
        f.close()
        self.assertEqual(sorted(os.listdir(d)),
                         ["ev-2026-01-01.jsonl", "ev-2026-01-02.jsonl"])
        with open(os.path.join(d, "ev-2026-01-01.jsonl")) as fh:
            self.assertEqual(fh.read(), "a\nd\n")


def _failing_appends(writer, n):
    """Make the writer's next ``n`` appends fail as on a full disk; the
    returned list holds how many failures are left."""
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
    def test_interface(self):
        """EventWriter provides IUsageEventWriter."""
        w = ue.EventWriter(Clock(), self.mktemp(), "s")
        self.addCleanup(w.close)
        verifyObject(ue.IUsageEventWriter, w)

    def test_writes_and_rotates_by_clock(self):
        """Events go to the file of the UTC day of the clock when written,
        one JSON object per line."""
        clock = Clock()
        clock.advance(DAY1 + 86399)
        d = self.mktemp()
        w = ue.EventWriter(clock, d, "srv")
        w.write("mailbox", DAY1 + 10, 5, 1, "happy", app_id="a")
        clock.advance(2)
        w.write("relay", DAY1 + 20, 7, 2, "happy", total_bytes=99)
        w.close()
        one = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        two = _read(os.path.join(d, "usage-events-2026-01-02.jsonl"))
        self.assertEqual([e["kind"] for e in one], ["mailbox"])
        self.assertEqual(two[0]["bytes"], 99)
        self.assertEqual(two[0]["server"], "srv")

    def test_full_queue_drops_not_blocks(self):
        """When the queue is full, write returns at once and counts the
        dropped event instead of blocking the reactor."""
        w = ue.EventWriter(Clock(), self.mktemp(), "s", max_queue=1)
        # stop the thread from draining: hold it on a full queue by
        # closing first, then write into a fresh full queue
        w.close()
        w._queue.put_nowait(("d", "x\n"))
        w.write("relay", 0, 1, None, "lonely")
        self.assertEqual(w.dropped, 1)

    def test_drops_are_logged_at_powers_of_ten(self):
        """Dropped events are logged on the 1st, 10th, 100th... drop, with
        the count, so an operator learns that the analytics miss events
        without a log line per event."""
        seen = self._capture_log()
        w = ue.EventWriter(Clock(), self.mktemp(), "s", max_queue=1)
        w.close()
        w._queue.put_nowait(("d", "x\n"))
        for _ in range(12):
            w.write("relay", 0, 1, None, "lonely")
        self.assertEqual(w.dropped, 12)
        warnings = [e for e in seen if e["log_level"] == LogLevel.warn]
        self.assertEqual([e["dropped"] for e in warnings], [1, 10])

    def test_failed_append_retried_then_counted_and_logged(self):
        """An append that fails (disk full) is retried; one that keeps
        failing counts its lines as lost, is logged at the next write and
        at close, and the writer goes on writing later events."""
        seen = self._capture_log()
        d = self.mktemp()
        w = ue.EventWriter(Clock(), d, "srv", retry_delays=(0, 0))
        failures = _failing_appends(w, 3)  # three: the first batch is lost
        w.write("relay", DAY1, 1, None, "lonely")
        # wait for the writer thread to give that batch up
        for _ in range(10000):
            if w.lost:
                break
            time.sleep(0.001)
        w.write("relay", DAY1, 2, None, "happy")
        w.close()
        self.assertEqual((w.lost, w.dropped, failures[0]), (1, 0, 0))
        [e] = _read(os.path.join(d, "usage-events-1970-01-01.jsonl"))
        self.assertEqual(e["result"], "happy")
        errors = [e for e in seen if e["log_level"] == LogLevel.error]
        self.assertEqual(len(errors), 1)
        self.assertIn("No space left", errors[0]["error"])
        summary = [e for e in seen if e["log_level"] == LogLevel.warn]
        self.assertEqual((summary[-1]["dropped"], summary[-1]["lost"]),
                         (0, 1))

    def test_append_that_recovers_loses_nothing(self):
        """A failure that clears before the retries run out loses
        nothing and logs nothing."""
        seen = self._capture_log()
        d = self.mktemp()
        w = ue.EventWriter(Clock(), d, "srv", retry_delays=(0, 0))
        _failing_appends(w, 2)
        w.write("relay", DAY1, 1, None, "lonely")
        w.close()
        self.assertEqual((w.lost, len(_read(os.path.join(
            d, "usage-events-1970-01-01.jsonl")))), (0, 1))
        self.assertEqual([e for e in seen
                          if e["log_level"] >= LogLevel.warn], [])

    def _capture_log(self):
        seen = []
        globalLogPublisher.addObserver(seen.append)
        self.addCleanup(globalLogPublisher.removeObserver, seen.append)
        return seen

    def test_no_ip_address(self):
        """The writer has no parameter for an address: keyword arguments
        other than the documented ones are refused, so a caller cannot
        leak one by accident."""
        w = ue.EventWriter(Clock(), self.mktemp(), "s")
        self.addCleanup(w.close)
        self.assertRaises(TypeError, w.write, "relay", 0, 1, None, "happy",
                          peer="127.0.0.1")

    def test_bound(self):
        """bound() writes a kind=bind event at the clock's time with the
        side and client version, and no times or result."""
        clock = Clock()
        clock.advance(DAY1 + 7)
        d = self.mktemp()
        w = ue.EventWriter(clock, d, "srv")
        w.bound("app", "side1", ["python", "0.24"])
        w.close()
        [e] = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        self.assertEqual((e["kind"], e["started"], e["result"],
                          e["total_time"], e["app_id"]),
                         ("bind", DAY1 + 7, None, None, "app"))
        self.assertEqual(e["clients"], [
            {"side": "side1", "impl": "python", "version": "0.24"}])


class Adapters(unittest.TestCase):
    def test_relay_events(self):
        """RelayEvents is a relay IUsageWriter that turns each relay record
        into a relay event (mood -> result, total_bytes -> bytes) and
        ignores the live counts."""
        from wormhole.relay._interfaces import IUsageWriter
        clock = Clock()
        clock.advance(DAY1)
        d = self.mktemp()
        a = ue.RelayEvents(ue.EventWriter(clock, d, "r1"))
        verifyObject(IUsageWriter, a)
        a.write_current(0, 0, 1, 2, 3)
        a.write_record({"started": DAY1, "total_time": 2.0,
                        "waiting_time": 1.0, "total_bytes": 42,
                        "mood": "happy"})
        a.close()
        [e] = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        self.assertEqual((e["kind"], e["result"], e["bytes"], e["server"]),
                         ("relay", "happy", 42, "r1"))

    def test_mailbox_events(self):
        """MailboxEvents writes the Mailbox server's usage records (kind,
        app id, times, result) and binds."""
        clock = Clock()
        clock.advance(DAY1)
        d = self.mktemp()
        m = ue.MailboxEvents(ue.EventWriter(clock, d, "m1"))
        m.record({"kind": "mailbox", "app_id": "a", "started": DAY1,
                  "waiting_time": None, "total_time": 3.0,
                  "result": "lonely"})
        m.bound("a", "s1", ["python", "0.24"])
        m.close()
        got = _read(os.path.join(d, "usage-events-2026-01-01.jsonl"))
        self.assertEqual([(e["kind"], e["result"]) for e in got],
                         [("mailbox", "lonely"), ("bind", None)])
