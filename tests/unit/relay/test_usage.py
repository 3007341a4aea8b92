"""The usage recorder and its writers (memory, SQLite, JSON lines)."""

import io
import json
import os
import sqlite3

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_ops.usage import IUsageWriter, JSONLinesWriter, RelaySQLiteWriter
from wormhole_relay._interfaces import IUsageRecorder
from wormhole_relay._usage import MemoryWriter, UsageRecorder


class Recorder(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.clock.advance(1000)

    def test_interfaces(self):
        """The recorder and every writer provide their interfaces."""
        path = self.mktemp()
        writers = [MemoryWriter(), RelaySQLiteWriter(reactor, path),
                   JSONLinesWriter(reactor, io.StringIO())]
        for w in writers:
            verifyObject(IUsageWriter, w)
        r = UsageRecorder(self.clock, writers)
        verifyObject(IUsageRecorder, r)
        return r.close()

    def test_memory(self):
        """records() returns every record, oldest first, as dicts."""
        r = UsageRecorder(self.clock)
        r.record(started=1, total_time=2, waiting_time=None, total_bytes=0,
                 mood="lonely")
        r.record(started=3, total_time=4, waiting_time=1, total_bytes=9,
                 mood="happy")
        self.assertEqual([x["mood"] for x in r.records()],
                         ["lonely", "happy"])

    @inlineCallbacks
    def test_json_lines(self):
        """--log-fd gets one JSON object per record with the reference's
        keys (started, total_time, waiting_time, total_bytes, mood),
        written by the writer's thread by the time close() fires."""
        f = io.StringIO()
        r = UsageRecorder(self.clock, [JSONLinesWriter(reactor, f)])
        r.record(started=1, total_time=2, waiting_time=0.5, total_bytes=7,
                 mood="happy")
        yield r.close()
        line = f.getvalue()
        self.assertTrue(line.endswith("\n"))
        self.assertEqual(json.loads(line), {
            "started": 1, "total_time": 2, "waiting_time": 0.5,
            "total_bytes": 7, "mood": "happy"})

    @inlineCallbacks
    def test_json_to_fd(self):
        """from_fd writes through a real file descriptor."""
        rfd, wfd = os.pipe()
        w = JSONLinesWriter.from_fd(reactor, wfd)
        w.write_record({"mood": "errory"})
        yield w.close()
        self.assertEqual(json.loads(os.read(rfd, 1000)), {"mood": "errory"})
        w._f.close()
        os.close(rfd)

    @inlineCallbacks
    def test_sqlite(self):
        """--usage-db: schema version 1, a usage row per record with the
        mood in `result`, and one `current` row with the latest counts."""
        path = self.mktemp()
        r = UsageRecorder(self.clock, [RelaySQLiteWriter(reactor, path)])
        r.record(started=1, total_time=2, waiting_time=None, total_bytes=0,
                 mood="errory")
        r.update_current(2, 1, 500)
        self.clock.advance(5)
        r.update_current(4, 0, 600)
        yield r.close()
        db = sqlite3.connect(path)
        self.assertEqual(db.execute("SELECT version FROM version").fetchall(),
                         [(1,)])
        self.assertEqual(db.execute(
            "SELECT started, total_time, waiting_time, total_bytes, result"
            " FROM usage").fetchall(), [(1, 2, None, 0, "errory")])
        self.assertEqual(db.execute("SELECT * FROM current").fetchall(),
                         [(1000, 1005, 4, 0, 600)])
        db.close()

    @inlineCallbacks
    def test_sqlite_reopen(self):
        """Opening an existing database keeps its rows and version."""
        path = self.mktemp()
        w = RelaySQLiteWriter(reactor, path)
        w.write_record(dict(started=1, total_time=1, waiting_time=1,
                            total_bytes=1, mood="happy"))
        yield w.close()
        w = RelaySQLiteWriter(reactor, path)
        yield w.close()
        db = sqlite3.connect(path)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM usage").fetchone(),
                         (1,))
        self.assertEqual(db.execute("SELECT * FROM version").fetchall(),
                         [(1,)])
        db.close()

    def test_blur(self):
        """--blur-usage rounds started down and sizes to a coarse scale."""
        r = UsageRecorder(self.clock, blur=60)
        r.record(started=125, total_time=2, waiting_time=1,
                 total_bytes=123456, mood="happy")
        rec = r.records()[0]
        self.assertEqual(rec["started"], 120)
        self.assertEqual(rec["total_bytes"], 120000)


class Current(unittest.TestCase):
    def test_current_row_follows_the_relay(self):
        """The relay rewrites the `current` row at start, every 60 s on its
        clock, and at stop: connections in pairs, waiting, and bytes of
        pairs still open."""
        from wormhole_relay.server import build_relay

        from ...relay._fakes import SIDE1, SIDE2, TOKEN, TOKEN2, FakeGlue, handshake
        clock = Clock()
        clock.advance(100)
        memory = MemoryWriter()
        relay = build_relay(clock, extra_writers=[memory])
        relay.start()
        events = []
        conns = []
        for name, token, side in (("A", TOKEN, SIDE1), ("B", TOKEN, SIDE2),
                                  ("C", TOKEN2, SIDE1)):
            c = relay.connection_for(FakeGlue(name, events))
            c.start()
            c.data_received(handshake(token, side))
            conns.append(c)
        conns[0].data_received(b"12345")

        self.assertEqual(memory.current, (100, 100, 0, 0, 0))
        clock.advance(60)
        self.assertEqual(memory.current, (100, 160, 2, 1, 5))
        for c in conns:
            c.connection_lost()
        clock.advance(1)
        relay.stop()
        self.assertEqual(memory.current, (100, 161, 0, 0, 0))
        self.assertEqual(clock.getDelayedCalls(), [])
