"""A classic transfer stopped on purpose while its bytes move tells the
peer over Transit (wormhole.transfer._cancel, docs/transfer.md
"Cancelling"): the sender with an empty record and its reason, the
receiver with ``{"error": REASON}`` in place of the final ack; each side
of ours reports the other's cancel as "cancelled". In memory: fake pipes,
``task.Clock``."""
import hashlib
import io
import json

from twisted.internet import defer, error
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole.errors import TransferError
from wormhole.transfer import Cancellation, Cancelled, _cancel, _mover

from ._pipes import FakePipe, _Progress

REASON = "transfer cancelled (Ctrl-C)"
SIZE = 3_000_000


class Sender(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.pipe = FakePipe(high_water=1)  # one write per turn
        self.sending = _mover.Sending(self.pipe, self.clock)
        self.d = self.sending.send(io.BytesIO(b"x" * SIZE), _Progress(), SIZE)

    def test_cancel_mid_file(self):
        """The file stops (nothing more is read or sent, even when the
        transport asks), then the empty record and the reason go in one
        write, then the pipe is closed; the send fails with Cancelled
        (whose caller closes the pipe at once, as ``_send`` does)."""
        self.d.addErrback(lambda f: (self.pipe.close(), f)[1])
        before = len(self.pipe.records)
        told = self.sending.cancel(REASON)
        self.successResultOf(told)
        self.assertEqual(self.pipe.records[before:], [b"", REASON.encode()])
        self.assertEqual(self.pipe.writes[-1], 2)
        self.assertEqual(self.pipe.closed, 2)
        f = self.failureResultOf(self.d, Cancelled)
        self.assertEqual(str(f.value), f"cancelled: {REASON}")
        self.pipe.drain()
        self.assertEqual(len(self.pipe.records), before + 2)

    def test_no_reason_when_it_could_end_the_file(self):
        """With no more than the reason's length of file bytes still due,
        only the empty record goes: a receiver that does not know it would
        count the reason as the file's last bytes."""
        first = _mover.RECORDS_PER_WRITE * _mover.RECORD_SIZE  # the first write
        pipe = FakePipe(high_water=first - 1)
        sending = _mover.Sending(pipe, self.clock)
        size = first + len(REASON)
        d = sending.send(io.BytesIO(b"x" * size), _Progress(), size)
        self.assertEqual(sum(len(r) for r in pipe.records), first)
        sending.cancel(REASON)
        self.assertEqual(pipe.records[-1], b"")
        self.failureResultOf(d, Cancelled)

    def test_receiver_cancels_mid_file(self):
        """The receiver's ``{"error": ...}`` while the file goes stops the
        send at once, saying the receiver cancelled."""
        before = len(self.pipe.records)
        self.pipe.answer.callback(json.dumps({"error": REASON}).encode())
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the receiver cancelled the transfer (Ctrl-C)")
        self.pipe.drain()
        self.assertEqual(len(self.pipe.records), before)
        self.assertEqual(self.pipe.unregistered, 1)

    def test_other_record_mid_file(self):
        """Anything else from the receiver mid-file is a protocol error."""
        self.pipe.answer.callback(b'{"ack": "ok"}')
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the receiver sent b'{\"ack\": \"ok\"}' before all "
                         "bytes were sent")

    def test_receiver_cancels_in_place_of_the_ack(self):
        """After the last byte: the cancel comes where the ack would."""
        while not self.d.called:
            self.pipe.drain()
        digest = self.successResultOf(self.d)
        confirmed = self.sending.confirmed(digest, SIZE)
        self.assertNoResult(confirmed)
        self.pipe.answer.callback(json.dumps({"error": REASON}).encode())
        f = self.failureResultOf(confirmed, TransferError)
        self.assertEqual(str(f.value), "the receiver cancelled the transfer (Ctrl-C)")

    def test_ack_still_confirms(self):
        while not self.d.called:
            self.pipe.drain()
        digest = self.successResultOf(self.d)
        self.pipe.answer.callback(json.dumps({"ack": "ok", "sha256": digest}).encode())
        self.successResultOf(self.sending.confirmed(digest, SIZE))

    def test_cancel_after_the_last_byte_only_closes(self):
        while not self.d.called:
            self.pipe.drain()
        sent = len(self.pipe.records)
        self.successResultOf(self.sending.cancel(REASON))
        self.assertEqual(len(self.pipe.records), sent)
        self.assertEqual(self.pipe.closed, 1)

    def test_flush_is_bounded(self):
        """A connection that never finishes closing (the peer reads
        nothing): the cancel fires after FLUSH_TIMEOUT anyway."""
        self.pipe.close = lambda: defer.Deferred()
        told = self.sending.cancel(REASON)
        self.clock.advance(_cancel.FLUSH_TIMEOUT - 0.1)
        self.assertNoResult(told)
        self.clock.advance(0.1)
        self.successResultOf(told)
        self.failureResultOf(self.d, Cancelled)


class Early(unittest.TestCase):
    def test_cancelled_before_the_bytes(self):
        """A Cancellation used before Transit connected: once the bytes
        would start, the send stops without a byte."""
        cancellation = Cancellation()
        self.successResultOf(cancellation.cancel(REASON))
        pipe = FakePipe(high_water=1)
        sending = _mover.Sending(pipe, Clock())
        cancellation.moving(sending.cancel)
        d = sending.send(io.BytesIO(b"x" * 10), _Progress(), 10)
        self.failureResultOf(d, Cancelled)
        self.assertEqual(pipe.records, [])

    def test_only_the_first_reason(self):
        cancellation = Cancellation()
        calls = []
        done = cancellation.moving(lambda reason: calls.append(reason))
        cancellation.cancel(REASON)
        cancellation.cancel("transfer cancelled (SIGTERM)")
        done()
        self.assertEqual(calls, [REASON])


class ReceivePipe:
    """The record pipe as ``receive_file`` uses it."""

    def __init__(self):
        self.consumer = None
        self.sent = []
        self.closed = 0
        self._closing = []

    def connectConsumer(self, consumer, expected):
        self.consumer, self.expected, self.got = consumer, expected, 0
        self.done = defer.Deferred()
        return self.done

    def deliver(self, *records):
        for r in records:
            if self.consumer is None:
                return
            self.consumer.write(r)
            self.got += len(r)
            if self.got >= self.expected:
                consumer, self.consumer = self.consumer, None
                self.done.callback(consumer)

    def send_record(self, record):
        self.sent.append(record)

    def close(self):
        self.closed += 1
        d = defer.Deferred()
        self._closing.append(d)
        return d

    def lost(self):
        """The connection went (our close, or the peer's)."""
        for d in self._closing:
            d.callback(None)
        if self.consumer is not None:
            self.consumer = None
            self.done.errback(error.ConnectionClosed("closed"))


class Partial:
    def __init__(self):
        self.data = bytearray()

    def write(self, data):
        self.data += data

    @property
    def size(self):
        return len(self.data)

    def finish(self):
        return hashlib.sha256(self.data).hexdigest()


class Receiver(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.pipe = ReceivePipe()
        self.partial = Partial()
        self.cancellation = Cancellation()
        self.d = _mover.receive_file(self.pipe, self.partial, SIZE, _Progress(), self.clock,
                                     cancellation=self.cancellation)
        self.pipe.deliver(b"x" * 1000)

    def test_sender_cancels(self):
        """The empty record, then the reason: "the sender cancelled the
        transfer (Ctrl-C)"; the reason is not file data; we close."""
        self.pipe.deliver(b"", REASON.encode())
        self.assertEqual(self.pipe.closed, 1)
        self.pipe.lost()
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the sender cancelled the transfer (Ctrl-C)")
        self.assertEqual(bytes(self.partial.data), b"x" * 1000)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_sender_cancels_without_a_reason(self):
        """The empty record, then the close."""
        self.pipe.deliver(b"")
        self.pipe.lost()
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the sender cancelled the transfer")
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_reason_wait_is_bounded(self):
        """The empty record and nothing more: we give up on the reason
        after REASON_TIMEOUT and close."""
        self.pipe.deliver(b"")
        self.clock.advance(_cancel.REASON_TIMEOUT)
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the sender cancelled the transfer")
        self.assertEqual(self.pipe.closed, 1)

    def test_other_words_are_the_sender_giving_up(self):
        self.pipe.deliver(b"", b"out of disk")
        self.pipe.lost()
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the sender gave up: out of disk")

    def test_a_plain_close_is_still_a_close(self):
        self.pipe.lost()
        f = self.failureResultOf(self.d, TransferError)
        self.assertEqual(str(f.value), "the sender closed the connection after 1.0 kB of "
                         "3.0 MB arrived")

    def test_we_cancel(self):
        """Our cancel sends ``{"error": REASON}`` (what a reference sender
        reads as a failed ack), closes, and fails with Cancelled; what
        comes afterwards is not written."""
        told = self.cancellation.cancel(REASON)
        self.assertEqual([json.loads(r) for r in self.pipe.sent], [{"error": REASON}])
        self.assertEqual(self.pipe.closed, 1)
        self.failureResultOf(self.d, Cancelled)
        self.assertNoResult(told)
        self.pipe.lost()
        self.successResultOf(told)
        self.assertEqual(self.partial.size, 1000)

    def test_our_record_fails_a_reference_sender(self):
        """What the reference 0.24 and wormhole-william check in the final
        ack: ``ack`` must be ``ok``; ours has none."""
        record = json.loads(_cancel.receiver_record(REASON))
        self.assertNotEqual(record.get("ack", ""), "ok")

    def test_all_bytes_still_arrive(self):
        self.pipe.deliver(b"y" * (SIZE - 1000))
        digest = self.successResultOf(self.d)
        self.assertEqual(digest, hashlib.sha256(b"x" * 1000 + b"y" * (SIZE - 1000)).hexdigest())


class Connecting(unittest.TestCase):
    """A cancel while Transit connects waits for the connection (bounded)
    and tells the peer over it."""

    def test_waits_for_the_connection(self):
        clock = Clock()
        cancellation = Cancellation()
        cancellation.connecting(clock)
        told = cancellation.cancel(REASON)
        self.assertNoResult(told)
        pipe = FakePipe(high_water=1)
        sending = _mover.Sending(pipe, clock, size=SIZE)
        done = cancellation.moving(sending.cancel)
        self.assertEqual(pipe.records, [b"", REASON.encode()])
        self.successResultOf(told)
        self.failureResultOf(sending.send(io.BytesIO(b"x" * SIZE), _Progress(), SIZE),
                             Cancelled)
        done()

    def test_connection_never_comes(self):
        clock = Clock()
        cancellation = Cancellation()
        cancellation.connecting(clock)
        told = cancellation.cancel(REASON)
        clock.advance(_cancel.CONNECT_TIMEOUT)
        self.successResultOf(told)

    def test_connection_fails(self):
        cancellation = Cancellation()
        cancellation.connecting(Clock())
        told = cancellation.cancel(REASON)
        cancellation.over()
        self.successResultOf(told)

    def test_receiver_tells_once_connected(self):
        cancellation = Cancellation()
        cancellation.connecting(Clock())
        told = cancellation.cancel(REASON)
        pipe = ReceivePipe()
        d = _mover.receive_file(pipe, Partial(), SIZE, _Progress(), Clock(),
                                cancellation=cancellation)
        self.assertEqual([json.loads(r) for r in pipe.sent], [{"error": REASON}])
        self.assertIsNone(pipe.consumer)
        self.failureResultOf(d, Cancelled)
        pipe.lost()
        self.successResultOf(told)
