"""The record pipe ``connect()`` yields (Transit protocol, "API").

Records go out with ``send_record`` and come in through ``receive_record``
(a Deferred per record) or, once a consumer is connected with
``connectConsumer``, straight into its ``write`` (Transit protocol, "API":
the pipe is an IProducer/IConsumer for bytes, one record per chunk). Flow
control both ways rides on the TCP transport: a producer registered with us
is registered with the socket, and when our consumer pauses us we stop
reading from the socket.

Bounded (docs/security.md, "Transit"): records nobody has asked for yet wait
in the pipe only up to ``max_queued`` bytes, then the socket is paused until
``receive_record`` takes them; a consumer connected with an ``expected``
size lowers the record limit to that size (no record of a file can be larger
than the file); and when the peer broke the record layer, the errors say
how.
"""

from collections import deque

from twisted.internet import defer, error, interfaces
from zope.interface import implementer

from ._codec import DEFAULT_MAX_RECORD
from ._file import FileConsumer
from ._interfaces import IRecordPipe, IRecordSink, ITransitConnection

# The TCP transport's ``bufferSize`` is both its read size and the
# high-water mark at which it pauses a streaming producer. Twisted's 64 KiB
# means one 64 KiB record per reactor turn each way; a larger one lets a
# sender encrypt several records per turn and a receiver decrypt several
# frames out of one read without copying them. 512 KiB and more cost the
# sender ~20% more CPU (the transport joins its whole buffer into one
# bytes before sending; measured in docs/performance.md).
BULK_BUFFER = 256 * 1024
DEFAULT_MAX_QUEUED = 4 * 1024 * 1024

# why the socket is paused
_CONSUMER = "our consumer asked"
_QUEUE = "records wait for receive_record"


@implementer(IRecordPipe, IRecordSink, interfaces.IConsumer,
             interfaces.IPushProducer)
class RecordPipe:
    def __init__(self, connection, transport, description, max_queued=DEFAULT_MAX_QUEUED):
        self._connection = ITransitConnection(connection)
        self._transport = transport
        if transport is not None and getattr(transport, "bufferSize", 0) < BULK_BUFFER:
            transport.bufferSize = BULK_BUFFER
        self._description = description
        self._records = deque()
        self._queued = 0           # bytes in self._records
        self._max_queued = max_queued
        self._paused_for = set()   # the reasons the socket is paused
        self._refused = None       # how the peer broke the record layer
        self._waiting = deque()
        self._closed = defer.Deferred()
        self._lost = False
        self._consumer = None
        self._expected = None
        self._bytes = 0
        self._consumer_done = None

    def describe(self):
        return self._description

    # sending

    def send_record(self, record):
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"a record must be bytes, not {type(record).__name__}")
        # no copy: the record is encrypted before this returns
        self._connection.send_record(record)

    def send_records(self, records):
        """Several records in one transport write (the file sender's
        batches): Twisted sends one ``bytes`` without joining it to other
        writes, which saves a copy of every byte (docs/performance.md)."""
        records = list(records)
        for record in records:
            if not isinstance(record, (bytes, bytearray, memoryview)):
                raise TypeError(f"a record must be bytes, not {type(record).__name__}")
        self._connection.send_records(records)

    # IConsumer: each chunk a producer writes becomes one record

    def registerProducer(self, producer, streaming):
        self._transport.registerProducer(producer, streaming)

    def unregisterProducer(self):
        self._transport.unregisterProducer()

    def write(self, data):
        self.send_record(data)

    # receiving

    def receive_record(self):
        if self._records:
            return defer.succeed(self._take())
        if self._lost:
            return defer.fail(error.ConnectionClosed(
                "the transit connection is closed; no more records will arrive"
                + self._because()))
        d = defer.Deferred()
        self._waiting.append(d)
        return d

    def connectConsumer(self, consumer, expected=None):
        """Deliver every record to ``consumer.write``.

        With ``expected`` (a byte count), returns a Deferred firing with the
        consumer once that many bytes arrived, and disconnects it then.
        """
        if self._consumer is not None:
            raise RuntimeError("a consumer is already connected to this pipe")
        self._consumer = consumer
        self._expected = expected
        self._bytes = 0
        self._consumer_done = defer.Deferred()
        consumer.registerProducer(self, True)
        if expected is not None:
            self._connection.set_max_record(min(DEFAULT_MAX_RECORD, max(expected, 1)))
        queued, self._records = self._records, deque()
        self._queued = 0
        self._release(_QUEUE)
        self._to_consumer(queued)
        return self._consumer_done

    def writeToFile(self, f, expected, progress=None, hasher=None):
        """The reference 0.24's helper: write ``expected`` bytes of records
        into the open file ``f`` through a FileConsumer; fires with it."""
        return self.connectConsumer(FileConsumer(f, progress, hasher), expected)

    def disconnectConsumer(self):
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.unregisterProducer()

    def records_received(self, records):
        if self._consumer is not None:
            self._to_consumer(records)
            return
        for r in records:
            if self._waiting:
                self._waiting.popleft().callback(r)
            else:
                self._queue(r)

    def _queue(self, record):
        self._records.append(record)
        self._queued += len(record)
        if self._queued > self._max_queued:
            self._hold(_QUEUE)

    def _take(self):
        r = self._records.popleft()
        self._queued -= len(r)
        if self._queued <= self._max_queued // 2:
            self._release(_QUEUE)
        return r

    def queued_bytes(self):
        """Bytes of records received that nobody has taken yet."""
        return self._queued

    def records_refused(self, why):
        self._refused = why

    def _because(self):
        return f" ({self._refused})" if self._refused else ""

    def _to_consumer(self, records):
        records = deque(records)
        while records and self._consumer is not None:
            r = records.popleft()
            self._consumer.write(r)
            self._bytes += len(r)
            if self._expected is not None and self._bytes >= self._expected:
                consumer, done = self._consumer, self._consumer_done
                self.disconnectConsumer()
                self._connection.set_max_record(DEFAULT_MAX_RECORD)
                done.callback(consumer)
        # records past the expected end wait for receive_record
        for r in records:
            self._queue(r)

    # IPushProducer: our consumer throttles how fast we read the socket

    def pauseProducing(self):
        self._hold(_CONSUMER)

    def resumeProducing(self):
        self._release(_CONSUMER)

    def _hold(self, reason):
        first = not self._paused_for
        self._paused_for.add(reason)
        if first and self._transport is not None:
            self._transport.pauseProducing()

    def _release(self, reason):
        if reason in self._paused_for:
            self._paused_for.discard(reason)
            if not self._paused_for and self._transport is not None:
                self._transport.resumeProducing()

    def stopProducing(self):
        self._connection.close()

    # closing

    def connection_lost(self):
        self._lost = True
        waiting, self._waiting = self._waiting, deque()
        for d in waiting:
            d.errback(error.ConnectionClosed(
                "the transit connection closed before the next record" + self._because()))
        if self._consumer is not None:
            done = self._consumer_done
            self.disconnectConsumer()
            if self._expected is not None:
                done.errback(error.ConnectionClosed(
                    f"the transit connection closed after {self._bytes} "
                    f"of {self._expected} bytes" + self._because()))
        self._closed.callback(None)

    def close(self):
        """Flush what we wrote, hang up; fires when the socket is closed."""
        self._connection.close()
        d = defer.Deferred()
        self._closed.addBoth(lambda r: (d.callback(None), r)[1])
        return d
