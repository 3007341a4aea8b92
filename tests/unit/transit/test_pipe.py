"""The record pipe (Transit protocol, "API"): records, consumer, producer,
close, with a fake connection and a StringTransport."""

from twisted.internet import error, interfaces
from twisted.internet.testing import StringTransport
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._transit._interfaces import IRecordPipe, IRecordSink, ITransitConnection
from wormhole._transit._pipe import RecordPipe


@implementer(ITransitConnection)
class FakeConnection:
    def __init__(self):
        self.sent = []
        self.closed = 0

    def send_record(self, record):
        self.sent.append(record)

    def send_records(self, records):
        self.sent.append(("batch", records))

    def close(self):
        self.closed += 1

    def set_max_record(self, max_record):
        self.max_record = max_record

    def connection_made(self):
        pass

    def data_received(self, data):
        pass

    def connection_lost(self):
        pass

    def select(self, sink):
        pass

    def reject(self):
        pass

    def stop(self):
        pass


@implementer(interfaces.IConsumer)
class ListConsumer:
    def __init__(self):
        self.got = []
        self.producer = None
        self.streaming = None

    def registerProducer(self, producer, streaming):
        self.producer, self.streaming = producer, streaming

    def unregisterProducer(self):
        self.producer = None

    def write(self, data):
        self.got.append(data)


class Pipe(unittest.TestCase):
    def setUp(self):
        self.conn = FakeConnection()
        self.transport = StringTransport()
        self.pipe = RecordPipe(self.conn, self.transport, "->tcp:127.0.0.1:1")

    def test_interfaces(self):
        """The pipe is an IRecordPipe, IRecordSink, IConsumer and IPushProducer."""
        for iface in (IRecordPipe, IRecordSink, interfaces.IConsumer, interfaces.IPushProducer):
            verifyObject(iface, self.pipe)
        self.assertEqual(self.pipe.describe(), "->tcp:127.0.0.1:1")

    def test_send(self):
        """send_record and write hand bytes to the connection, one record
        each; anything but bytes is refused."""
        self.pipe.send_record(b"a")
        self.pipe.write(memoryview(b"b"))
        self.assertEqual(self.conn.sent, [b"a", b"b"])
        self.assertRaises(TypeError, self.pipe.send_record, "text")

    def test_send_records(self):
        """send_records hands the connection all records at once (one
        write); any record that is not bytes refuses the whole batch."""
        self.pipe.send_records(iter([b"a", bytearray(b"b")]))
        self.assertEqual(self.conn.sent, [("batch", [b"a", bytearray(b"b")])])
        self.assertRaises(TypeError, self.pipe.send_records, [b"a", "text"])
        self.assertEqual(len(self.conn.sent), 1)

    def test_receive_before_and_after(self):
        """Records that arrived first are queued; receive_record called
        first waits; order is kept."""
        d1 = self.pipe.receive_record()
        self.assertNoResult(d1)
        self.pipe.records_received([b"1", b"2"])
        self.assertEqual(self.successResultOf(d1), b"1")
        self.assertEqual(self.successResultOf(self.pipe.receive_record()), b"2")
        d3 = self.pipe.receive_record()
        self.assertNoResult(d3)
        self.pipe.records_received([b"3", b"4"])
        self.assertEqual(self.successResultOf(d3), b"3")
        self.assertEqual(self.successResultOf(self.pipe.receive_record()), b"4")

    def test_lost_fails_waiters(self):
        """When the connection goes, waiting and later receive_record calls
        fail with ConnectionClosed; close() then fires at once."""
        d = self.pipe.receive_record()
        self.pipe.connection_lost()
        self.failureResultOf(d, error.ConnectionClosed)
        self.failureResultOf(self.pipe.receive_record(), error.ConnectionClosed)
        self.successResultOf(self.pipe.close())

    def test_close_waits_for_lost(self):
        """close() asks the connection to close and fires only once it is
        really gone (after the transport flushed)."""
        d = self.pipe.close()
        self.assertEqual(self.conn.closed, 1)
        self.assertNoResult(d)
        self.pipe.connection_lost()
        self.successResultOf(d)

    def test_consumer_expected(self):
        """connectConsumer gets queued and new records; at `expected` bytes
        it is disconnected and the Deferred fires with it; the rest waits
        for receive_record."""
        self.pipe.records_received([b"ab"])
        c = ListConsumer()
        d = self.pipe.connectConsumer(c, expected=5)
        self.assertIs(c.producer, self.pipe)
        self.assertTrue(c.streaming)
        self.pipe.records_received([b"cd", b"e", b"after"])
        self.assertIs(self.successResultOf(d), c)
        self.assertEqual(c.got, [b"ab", b"cd", b"e"])
        self.assertIsNone(c.producer)
        self.assertEqual(self.successResultOf(self.pipe.receive_record()), b"after")

    def test_consumer_short(self):
        """The connection closing before `expected` bytes fails the Deferred."""
        c = ListConsumer()
        d = self.pipe.connectConsumer(c, expected=10)
        self.pipe.records_received([b"abc"])
        self.pipe.connection_lost()
        f = self.failureResultOf(d, error.ConnectionClosed)
        self.assertIn("3 of 10", str(f.value))

    def test_one_consumer(self):
        """A second consumer is refused; after disconnectConsumer records
        queue again."""
        c = ListConsumer()
        self.pipe.connectConsumer(c)
        self.assertRaises(RuntimeError, self.pipe.connectConsumer, ListConsumer())
        self.pipe.disconnectConsumer()
        self.pipe.records_received([b"x"])
        self.assertEqual(c.got, [])
        self.assertEqual(self.successResultOf(self.pipe.receive_record()), b"x")

    def test_flow_control(self):
        """Our consumer pausing us pauses the socket; a producer registered
        with us is registered with the socket."""
        self.pipe.pauseProducing()
        self.assertEqual(self.transport.producerState, "paused")
        self.pipe.resumeProducing()
        self.assertEqual(self.transport.producerState, "producing")
        producer = ListConsumer()  # anything; StringTransport only stores it
        self.pipe.registerProducer(producer, True)
        self.assertIs(self.transport.producer, producer)
        self.assertTrue(self.transport.streaming)
        self.pipe.unregisterProducer()
        self.assertIsNone(self.transport.producer)
        self.pipe.stopProducing()
        self.assertEqual(self.conn.closed, 1)



class BulkBuffer(unittest.TestCase):
    def test_transport_buffer_raised(self):
        """The pipe raises the socket's buffer (read size and the
        high-water mark that pauses a streaming producer) from Twisted's
        64 KiB to BULK_BUFFER, so several records go per reactor turn."""
        from wormhole._transit._pipe import BULK_BUFFER
        transport = StringTransport()
        transport.bufferSize = 65536
        RecordPipe(FakeConnection(), transport, "x")
        self.assertEqual(transport.bufferSize, BULK_BUFFER)
        self.assertGreater(BULK_BUFFER, 65536)

    def test_larger_buffer_kept(self):
        """A transport that already buffers more keeps its size."""
        transport = StringTransport()
        transport.bufferSize = 1 << 24
        RecordPipe(FakeConnection(), transport, "x")
        self.assertEqual(transport.bufferSize, 1 << 24)


class Bounds(unittest.TestCase):
    """The pipe keeps a bounded number of unread bytes and says why the
    peer was refused (docs/security.md, "Transit")."""

    def setUp(self):
        self.conn = FakeConnection()
        self.transport = StringTransport()
        self.pipe = RecordPipe(self.conn, self.transport, "d", max_queued=10)

    def test_queue_pauses_socket(self):
        """Records nobody asked for pause the socket once they exceed
        max_queued bytes (4 MiB by default); taking them down to half
        resumes it; a consumer's own pause is kept."""
        self.assertEqual(RecordPipe(self.conn, None, "d")._max_queued, 4 * 1024 * 1024)
        self.pipe.records_received([b"12345", b"67890"])
        self.assertEqual(self.transport.producerState, "producing")
        self.pipe.records_received([b"x"])
        self.assertEqual(self.transport.producerState, "paused")
        self.assertEqual(self.pipe.queued_bytes(), 11)
        self.pipe.pauseProducing()
        self.pipe.receive_record()
        self.assertEqual(self.pipe.queued_bytes(), 6)
        self.assertEqual(self.transport.producerState, "paused")
        self.pipe.receive_record()
        self.assertEqual(self.transport.producerState, "paused")
        self.pipe.resumeProducing()
        self.assertEqual(self.transport.producerState, "producing")

    def test_expected_size_is_the_record_limit(self):
        """A consumer connected for N bytes makes N the record limit; the
        default comes back when they have arrived."""
        c = ListConsumer()
        self.pipe.connectConsumer(c, expected=1000)
        self.assertEqual(self.conn.max_record, 1000)
        self.pipe.records_received([bytes(1000)])
        self.assertEqual(self.conn.max_record, 16 * 1024 * 1024)

    def test_refusal_reason_in_errors(self):
        """When the peer broke the record layer, the error the application
        gets names it."""
        c = ListConsumer()
        d = self.pipe.connectConsumer(c, expected=1000)
        self.pipe.records_refused("record number 3 announced 4294967251 bytes; "
                                  "the limit is 1000 (docs/security.md)")
        self.pipe.connection_lost()
        f = self.failureResultOf(d, error.ConnectionClosed)
        self.assertEqual(str(f.value), "the transit connection closed after 0 of 1000 bytes "
                         "(record number 3 announced 4294967251 bytes; the limit is 1000 "
                         "(docs/security.md))")
