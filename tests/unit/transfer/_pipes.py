"""In-memory stand-ins for the classic byte mover's tests: a record pipe
that pauses its producer as Twisted's transport does, and a progress
counter."""
from twisted.internet import defer, interfaces
from zope.interface import implementer


class _Progress:
    def __init__(self):
        self.n = 0

    def __call__(self, n):
        self.n += n


@implementer(interfaces.IConsumer)
class FakePipe:
    """Takes records like the record pipe; pauses its producer once
    ``high_water`` bytes are buffered, as Twisted's transport does."""

    def __init__(self, high_water):
        self.high_water = high_water
        self.records = []
        self.writes = []  # records per transport write
        self.buffered = 0
        self.producer = None
        self.unregistered = 0
        self.fail_with = None
        self.answer = defer.Deferred()  # the receiver's next record
        self.closed = 0

    def receive_record(self):
        return self.answer

    def close(self):
        self.closed += 1
        return defer.succeed(None)

    def registerProducer(self, producer, streaming):
        assert streaming
        self.producer = producer

    def unregisterProducer(self):
        self.unregistered += 1
        self.producer = None

    def write(self, data):
        self.send_record(data)

    def send_record(self, record):
        self.send_records([record])

    def send_records(self, records):
        """One transport write carrying ``records``."""
        if self.fail_with is not None:
            raise self.fail_with
        if self.closed:
            raise ConnectionError("the transit connection is closed")
        self.writes.append(len(records))
        self.records.extend(records)
        self.buffered += sum(len(r) for r in records)
        if self.buffered > self.high_water:
            self.producer.pauseProducing()

    def drain(self):
        """The transport flushed everything: resume the producer."""
        self.buffered = 0
        if self.producer is not None:
            self.producer.resumeProducing()
