"""Usage records: blurring and the JSON log."""

import json
import os

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole_mailbox._store import MemoryStore
from wormhole_mailbox._usage import UsageLog
from wormhole_ops.usage import JSONLinesWriter, blur_duration

REC = {"kind": "mailbox", "app_id": "a", "started": 1234567.8,
       "waiting_time": 3.4, "total_time": 754.0, "result": "happy"}


class Usage(unittest.TestCase):
    def test_blur_duration(self):
        """Durations fall into coarse buckets."""
        self.assertEqual(blur_duration(None), None)
        self.assertEqual(blur_duration(3.4), 3)
        self.assertEqual(blur_duration(123), 120)
        self.assertEqual(blur_duration(754), 780)
        self.assertEqual(blur_duration(7300), 7200)

    def test_blur(self):
        """--blur-usage rounds the start down and the durations to
        buckets."""
        log = UsageLog(MemoryStore(), blur=3600, keep=None)
        log.record(dict(REC))
        (rec,) = log.records
        self.assertEqual(rec["started"], 1234567.8 // 3600 * 3600)
        self.assertEqual((rec["waiting_time"], rec["total_time"]), (3, 780))

    def test_unblurred(self):
        """Without blurring the record is kept as it is."""
        log = UsageLog(MemoryStore(), keep=None)
        log.record(dict(REC))
        self.assertEqual(list(log.records), [REC])

    @inlineCallbacks
    def test_log_fd(self):
        """--log-fd gets one JSON line per record."""
        r, w = os.pipe()
        writer = JSONLinesWriter.from_fd(reactor, w)
        log = UsageLog(MemoryStore(), log_writer=writer)
        log.record(dict(REC))
        yield log.close()
        writer._f.close()
        with os.fdopen(r) as f:
            self.assertEqual(json.loads(f.readline()), REC)
