"""Where an accepted stream goes (the "stream" feature, docs/transfer-v2.md
"Streams"): the application's ``IConsumer``, as the bytes come.

A stream has no size, so nothing can be held back until its hash is
verified: every data record is written to the consumer at once (hashed
on the way), and the offer's outcome (``when_done()``) says whether the
sender's end matched. The consumer paces the sender: the subchannel is
registered with it as a streaming producer, so a consumer whose buffer
fills pauses the subchannel, and Dilation's flow control carries that
back to the sender's streamer (docs/dilation.md). A consumer that stops
(``stopProducing``: its reader went away) cancels the offer, and the
sender hears ``STOPPED_READING``.
"""
from twisted.internet import interfaces
from zope.interface import implementer

from . import _messages as M
from ._interfaces import ISink, IWriter

# the reason a sender hears when our consumer stopped taking the stream
# (its reader went away: a closed pipe); the CLI's words start with it
STOPPED_READING = "the receiver stopped reading the stream"


@implementer(interfaces.IPushProducer)
class SubchannelPacer:
    """The offer's subchannel as the consumer's producer: its pause and
    resume are the subchannel's (Dilation's flow control), its stop
    cancels the offer."""

    def __init__(self, transport, cancel):
        self._transport = transport
        self._cancel = cancel
        self.paused = False

    def pauseProducing(self):
        if not self.paused:
            self.paused = True
            self._transport.pauseProducing()

    def resumeProducing(self):
        if self.paused:
            self.paused = False
            self._transport.resumeProducing()

    def stopProducing(self):
        self.resumeProducing()  # what Dilation holds for other subchannels flows again
        self._cancel(STOPPED_READING)


@implementer(IWriter)
class StreamWriter:
    """The stream's one "file": each record to the consumer, hashed and
    counted for the FileAcknowledge. ``expected`` is None: the length is
    the sender's end's to say."""

    expected = None

    def __init__(self, consumer, pacer):
        self._consumer = consumer
        self._pacer = pacer
        self._hash = M.new_hash()
        self.received = 0
        consumer.registerProducer(pacer, True)
        self._registered = True

    def write(self, data):
        self._hash.update(data)
        self.received += len(data)
        self._consumer.write(bytes(data))

    def digest(self):
        return self._hash.digest()

    def _release(self):
        if self._registered:
            self._registered = False
            self._pacer.resumeProducing()
            self._consumer.unregisterProducer()

    def commit(self):
        self._release()

    def abort(self):
        # written is written: what the consumer got stays its own
        self._release()

    suspend = abort


@implementer(ISink)
class StreamSink:
    """The ISink of an accepted stream: one StreamWriter into
    ``consumer``; nothing on disk, so no final path."""

    final_path = None

    def __init__(self, consumer, pacer):
        self._consumer = consumer
        self._pacer = pacer
        self.writer = None

    def open_file(self, path, header):
        self.writer = StreamWriter(self._consumer, self._pacer)
        return self.writer

    def complete(self):
        pass

    def abort(self):
        if self.writer is not None:
            self.writer.abort()

    suspend = abort
