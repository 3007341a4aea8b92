"""The classic file sender (wormhole.transfer._mover ``Sending``): a streaming
producer that reads, hashes and sends 64 KiB records, as many per turn as
the transport takes before it pauses us (docs/performance.md)."""

import hashlib
import io
import os

from twisted.internet import defer, interfaces
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole.errors import TransferError
from wormhole.transfer import _mover as _transfer

from ._pipes import FakePipe, _Progress

# the size the error messages quote (what the offer announced)
TOTAL = 12_345_678


def send_file(pipe, fileobj, progress, total, clock=None):
    return _transfer.Sending(pipe, clock).send(fileobj, progress, total)


class Streamer(unittest.TestCase):
    def test_records_per_turn_until_paused(self):
        """Each turn sends records until the transport pauses us: 64 KiB
        records, RECORDS_PER_WRITE of them per write, several writes per
        turn; the sha256 and progress cover every byte and the producer is
        unregistered at the end."""
        per = _transfer.RECORDS_PER_WRITE
        data = os.urandom(3 * per * _transfer.RECORD_SIZE + 123)
        pipe = FakePipe(high_water=per * _transfer.RECORD_SIZE + 1)
        progress = _Progress()
        d = send_file(pipe, io.BytesIO(data), progress, len(data))
        verifyObject(interfaces.IPushProducer, pipe.producer)
        # the first turn ran in send_file: two writes until the mark passed
        self.assertEqual(pipe.writes, [per, per])
        self.assertNoResult(d)
        pipe.drain()
        # one full write, then a short one with the last 123 bytes, which
        # passes the mark before the file's end is seen
        self.assertEqual(pipe.writes, [per, per, per, 1])
        self.assertNoResult(d)
        pipe.drain()
        self.assertEqual(pipe.writes, [per, per, per, 1])
        self.assertEqual(self.successResultOf(d), hashlib.sha256(data).hexdigest())
        self.assertEqual(b"".join(pipe.records), data)
        self.assertEqual({len(r) for r in pipe.records[:-1]}, {_transfer.RECORD_SIZE})
        self.assertEqual(len(pipe.records[-1]), 123)
        self.assertEqual(progress.n, len(data))
        self.assertEqual(pipe.unregistered, 1)

    def test_file_of_whole_writes(self):
        """A file that ends on a write boundary ends with that write: the
        next read finds the end and the send fires, nothing empty sent."""
        per = _transfer.RECORDS_PER_WRITE
        data = os.urandom(per * _transfer.RECORD_SIZE)
        pipe = FakePipe(high_water=10 * len(data))
        d = send_file(pipe, io.BytesIO(data), _Progress(), len(data))
        self.assertEqual(self.successResultOf(d), hashlib.sha256(data).hexdigest())
        self.assertEqual(pipe.writes, [per])
        self.assertEqual(b"".join(pipe.records), data)

    def test_empty_file(self):
        """An empty file sends nothing and fires at once with its hash."""
        pipe = FakePipe(high_water=1)
        d = send_file(pipe, io.BytesIO(b""), _Progress(), 0)
        self.assertEqual(self.successResultOf(d), hashlib.sha256(b"").hexdigest())
        self.assertEqual(pipe.records, [])

    def test_stop_producing_fails_the_send(self):
        """The transport stopping us (the connection went) fails the send
        with ConnectionClosed and sends nothing more."""
        pipe = FakePipe(high_water=1)
        d = send_file(pipe, io.BytesIO(b"x" * 300000), _Progress(), TOTAL)
        producer = pipe.producer
        producer.stopProducing()
        f = self.failureResultOf(d, TransferError)
        self.assertRegex(str(f.value), r"^the receiver closed the connection after "
                         r"\d+\.\d kB of 12\.3 MB were sent$")
        sent = len(pipe.records)
        producer.resumeProducing()
        self.assertEqual(len(pipe.records), sent)

    def test_send_error_fails_the_send(self):
        """A record the connection refuses (it closed) fails the send
        with the one-line TransferError, not the socket's exception."""
        pipe = FakePipe(high_water=1)
        pipe.fail_with = ConnectionError("closed")
        d = send_file(pipe, io.BytesIO(b"x" * 10), _Progress(), TOTAL)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "the receiver closed the connection after "
                         "0 Bytes of 12.3 MB were sent")
        self.assertEqual(pipe.unregistered, 1)

    def test_only_the_announced_size(self):
        """A file that grew since the offer (it is being written): only
        the announced bytes are read and sent, and hashed."""
        data = os.urandom(300000)
        pipe = FakePipe(high_water=10 * len(data))
        f = io.BytesIO(data)
        d = send_file(pipe, f, _Progress(), 100000)
        self.assertEqual(self.successResultOf(d), hashlib.sha256(data[:100000]).hexdigest())
        self.assertEqual(b"".join(pipe.records), data[:100000])
        self.assertEqual(f.tell(), 100000)

    def test_shrunk_file_fails(self):
        """A file that ends before the announced size (truncated while
        sent) fails the send saying so; the receiver would wait forever."""
        pipe = FakePipe(high_water=10 ** 9)
        d = send_file(pipe, io.BytesIO(b"x" * 1000), _Progress(), TOTAL)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "the file ended after 1.0 kB of 12.3 MB: it shrank "
                         "while being sent")
        self.assertEqual(pipe.unregistered, 1)

    def test_receiver_that_reads_nothing(self):
        """Paused by the transport for STALL_TIMEOUT (the receiver reads
        nothing): the send fails saying the receiver stopped answering;
        each resume restarts the wait."""
        from twisted.internet.task import Clock
        clock = Clock()
        pipe = FakePipe(high_water=1)
        d = send_file(pipe, io.BytesIO(b"x" * 3_000_000), _Progress(), 3_000_000,
                                clock=clock)
        clock.advance(_transfer.STALL_TIMEOUT - 1)
        pipe.drain()  # some progress: the wait starts again
        clock.advance(_transfer.STALL_TIMEOUT - 1)
        self.assertNoResult(d)
        clock.advance(1)
        f = self.failureResultOf(d, TransferError)
        self.assertRegex(str(f.value), r"^the receiver stopped answering: nothing could be "
                         r"sent for 120 s after [\d.]+ kB of 3\.0 MB$")
        self.assertEqual(pipe.unregistered, 1)
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_finished_send_leaves_no_timer(self):
        """A send that completes cancels its stall timer."""
        from twisted.internet.task import Clock
        clock = Clock()
        pipe = FakePipe(high_water=1)
        data = b"x" * 600_000
        d = send_file(pipe, io.BytesIO(data), _Progress(), len(data), clock=clock)
        while not d.called:
            pipe.drain()
        self.successResultOf(d)
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_read_error_fails_the_send(self):
        """A file that cannot be read mid-way (a disk error) fails the send
        with a TransferError naming the read, not the receiver."""
        class Broken(io.BytesIO):
            def read(self, n):
                raise OSError(5, "Input/output error")
        pipe = FakePipe(high_water=1)
        d = send_file(pipe, Broken(), _Progress(), TOTAL)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "cannot read the file being sent after "
                         "0 Bytes of 12.3 MB: Input/output error")
        self.assertEqual(pipe.unregistered, 1)

    def test_paused_producer_stays_paused(self):
        """While paused, nothing is read or sent until resumeProducing."""
        per = _transfer.RECORDS_PER_WRITE
        f = io.BytesIO(b"x" * (2 * per * _transfer.RECORD_SIZE))
        pipe = FakePipe(high_water=1)
        d = send_file(pipe, f, _Progress(), len(f.getvalue()))
        self.assertEqual(pipe.writes, [per])
        self.assertEqual(f.tell(), per * _transfer.RECORD_SIZE)
        self.assertNoResult(d)
        pipe.drain()
        self.assertEqual(pipe.writes, [per, per])
        self.assertNoResult(d)  # the end of the file is not read yet
        pipe.drain()
        self.successResultOf(d)
        self.assertEqual(pipe.writes, [per, per])


class Ack(unittest.TestCase):
    def test_no_confirmation_in_time(self):
        """A receiver that never confirms: wait_for_ack fails after
        ACK_TIMEOUT plus the time to hash the file again from disk."""
        from twisted.internet.task import Clock

        class Pipe:
            def receive_record(self):
                return defer.Deferred()
        clock = Clock()
        size = 200 * 1000 * 1000
        d = _transfer.Sending(Pipe(), clock).confirmed("00", size=size)
        allowed = _transfer.ACK_TIMEOUT + size / _transfer.ACK_HASH_RATE
        clock.advance(allowed - 1)
        self.assertNoResult(d)
        clock.advance(1)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "the receiver stopped answering: all bytes were "
                         f"sent, and no confirmation came in {allowed:.0f} s")
