"""The CLI's file sender (cli/_transfer.py ``send_file``): a streaming
producer that reads, hashes and sends 64 KiB records, as many per turn as
the transport takes before it pauses us (docs/performance.md)."""

import hashlib
import io
import os

from twisted.internet import error, interfaces
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole.cli import _transfer


class _Progress:
    def __init__(self):
        self.n = 0

    def update(self, n):
        self.n += n


@implementer(interfaces.IConsumer)
class FakePipe:
    """Takes records like the record pipe; pauses its producer once
    ``high_water`` bytes are buffered, as Twisted's transport does."""

    def __init__(self, high_water):
        self.high_water = high_water
        self.records = []
        self.buffered = 0
        self.producer = None
        self.unregistered = 0
        self.fail_with = None

    def registerProducer(self, producer, streaming):
        assert streaming
        self.producer = producer

    def unregisterProducer(self):
        self.unregistered += 1
        self.producer = None

    def write(self, data):
        self.send_record(data)

    def send_record(self, record):
        if self.fail_with is not None:
            raise self.fail_with
        self.records.append(record)
        self.buffered += len(record)
        if self.buffered > self.high_water:
            self.producer.pauseProducing()

    def drain(self):
        """The transport flushed everything: resume the producer."""
        self.buffered = 0
        if self.producer is not None:
            self.producer.resumeProducing()


class Streamer(unittest.TestCase):
    def test_records_per_turn_until_paused(self):
        """Each turn sends records until the transport pauses us: 64 KiB
        records, several per turn; the sha256 and progress cover every
        byte and the producer is unregistered at the end."""
        data = os.urandom(5 * _transfer.RECORD_SIZE + 123)
        pipe = FakePipe(high_water=2 * _transfer.RECORD_SIZE)
        progress = _Progress()
        d = _transfer.send_file(pipe, io.BytesIO(data), progress)
        verifyObject(interfaces.IPushProducer, pipe.producer)
        # the first turn ran in send_file: 3 records until the mark passed
        self.assertEqual(len(pipe.records), 3)
        self.assertNoResult(d)
        pipe.drain()
        self.assertEqual(len(pipe.records), 6)
        self.assertNoResult(d)
        pipe.drain()  # the file's end: nothing more to send
        self.assertEqual(self.successResultOf(d), hashlib.sha256(data).hexdigest())
        self.assertEqual(b"".join(pipe.records), data)
        self.assertEqual({len(r) for r in pipe.records[:-1]}, {_transfer.RECORD_SIZE})
        self.assertEqual(progress.n, len(data))
        self.assertEqual(pipe.unregistered, 1)

    def test_empty_file(self):
        """An empty file sends nothing and fires at once with its hash."""
        pipe = FakePipe(high_water=1)
        d = _transfer.send_file(pipe, io.BytesIO(b""), _Progress())
        self.assertEqual(self.successResultOf(d), hashlib.sha256(b"").hexdigest())
        self.assertEqual(pipe.records, [])

    def test_stop_producing_fails_the_send(self):
        """The transport stopping us (the connection went) fails the send
        with ConnectionClosed and sends nothing more."""
        pipe = FakePipe(high_water=1)
        d = _transfer.send_file(pipe, io.BytesIO(b"x" * 300000), _Progress())
        producer = pipe.producer
        producer.stopProducing()
        self.failureResultOf(d, error.ConnectionClosed)
        sent = len(pipe.records)
        producer.resumeProducing()
        self.assertEqual(len(pipe.records), sent)

    def test_send_error_fails_the_send(self):
        """A record the connection refuses (it closed) fails the send
        with that error."""
        pipe = FakePipe(high_water=1)
        pipe.fail_with = ConnectionError("closed")
        d = _transfer.send_file(pipe, io.BytesIO(b"x" * 10), _Progress())
        self.failureResultOf(d, ConnectionError)
        self.assertEqual(pipe.unregistered, 1)

    def test_paused_producer_stays_paused(self):
        """While paused, nothing is read or sent until resumeProducing."""
        f = io.BytesIO(b"x" * (4 * _transfer.RECORD_SIZE))
        pipe = FakePipe(high_water=1)
        d = _transfer.send_file(pipe, f, _Progress())
        self.assertEqual(len(pipe.records), 1)
        self.assertEqual(f.tell(), _transfer.RECORD_SIZE)
        self.assertNoResult(d)
