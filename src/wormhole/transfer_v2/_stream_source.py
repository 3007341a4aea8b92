"""A stream we offer (the "stream" feature, docs/transfer-v2.md "Streams"):
bytes of a length nobody knows yet, from the application's producer or
file-like object, sent as the data records of a file and ended by our
FileAcknowledge (the whole length and BLAKE2b).

``StreamPump`` stands between the two: it is the ``IConsumer`` the
application's producer writes to, and the ``IPushProducer`` of the offer's
subchannel, so Dilation's flow control pauses the application's producer
(a streaming one is paused, a pull one is not asked for more) and memory
stays bounded whatever the stream's length: at most one data record is
gathered, and writes are cut into records of ``_source.DATA_CHUNK`` (one
Noise message each, docs/transfer-v2.md "Per-record work").
"""
import time

import attr
from twisted.internet import interfaces
from zope.interface import implementer

from ..errors import TransferError
from . import _framing
from . import _messages as M
from ._source import DATA_CHUNK, TURN_BUDGET


class StreamInputFailed(TransferError):
    """Our stream's input failed or was ended early (``fail(reason)``):
    the receiver was told why."""


@attr.s(frozen=True)
class OutgoingStream:
    """A stream offer: the StreamOffer record and where its bytes come
    from (a file-like object with ``read``, or ``start(consumer)``)."""
    offer = attr.ib()
    source = attr.ib()
    files = ()
    size = None
    is_directory = False


def prepare_stream(source, name="stream", text=False):
    """The OutgoingStream for ``source``: an object with ``read(n)``
    (read to its end, in the reactor thread: a file, not a pipe that may
    block), or a callable ``start(consumer)`` that makes a producer write
    to ``consumer`` (an ``IConsumer`` with ``finish()`` and ``fail(reason)``).
    ``text``: its bytes are a text message (UTF-8)."""
    if not (callable(getattr(source, "read", None)) or callable(source)):
        raise TypeError("a stream comes from a file-like object (read) or a "
                        "callable start(consumer)")
    return OutgoingStream(M.StreamOffer(name, int(time.time()), text), source)


@implementer(interfaces.IPullProducer)
class FileProducer:
    """A file-like object as a pull producer: one data record per
    ``resumeProducing``; its end finishes the stream, an OSError fails it."""

    def __init__(self, f, consumer):
        self._f = f
        self._consumer = consumer

    def resumeProducing(self):
        try:
            chunk = self._f.read(DATA_CHUNK)
        except OSError as e:
            self._consumer.unregisterProducer()
            self._consumer.fail(f"reading the input failed: {e.strerror or e}")
            return
        if chunk:
            self._consumer.write(chunk)
            return
        self._consumer.unregisterProducer()
        self._consumer.finish()

    def stopProducing(self):
        pass  # the file is the application's to close


@implementer(interfaces.IConsumer, interfaces.IPushProducer)
class StreamPump:
    """Sends a stream on ``transport`` (the offer's record writer).
    ``file_sent(size, digest)`` and ``all_sent()`` at its end (the
    sender's machine writes the FileAcknowledge), ``failed(error)`` when
    the input failed, ``progress(nbytes)`` as records go."""

    def __init__(self, clock, transport, source, file_sent, all_sent, failed,
                 progress=lambda n: None):
        self._clock = clock
        self._transport = transport
        self._source = source
        self._file_sent = file_sent
        self._all_sent = all_sent
        self._failed = failed
        self._progress = progress
        self._hash = M.new_hash()
        self._sent = 0
        self._partial = bytearray()  # at most one record's worth, gathered
        self._flush_call = None
        self._producer = None
        self._streaming = True
        self._pull_call = None
        self._paused = False
        self._over = False

    # -- the offer's side -----------------------------------------------------
    def start(self):
        self._transport.registerProducer(self, True)
        if callable(getattr(self._source, "read", None)):
            self.registerProducer(FileProducer(self._source, self), False)
        else:
            self._source(self)

    def stop(self):
        """The offer is over (rejected, cancelled, lost): the producer stops."""
        if not self._over:
            self._end()
            producer, self._producer = self._producer, None
            if producer is not None:
                producer.stopProducing()

    def _end(self):
        self._over = True
        for call in (self._flush_call, self._pull_call):
            if call is not None and call.active():
                call.cancel()
        self._transport.unregisterProducer()

    # -- IPushProducer, for the subchannel ---------------------------------------
    def pauseProducing(self):
        self._paused = True
        if self._producer is not None and self._streaming:
            self._producer.pauseProducing()

    def resumeProducing(self):
        if self._over:
            return
        self._paused = False
        if self._producer is not None:
            if self._streaming:
                self._producer.resumeProducing()
            else:
                self._schedule_pull()

    def stopProducing(self):
        self.stop()

    # -- IConsumer, for the application's producer --------------------------------
    def registerProducer(self, producer, streaming):
        if self._producer is not None:
            raise RuntimeError("a producer is already registered on this stream")
        self._producer = producer
        self._streaming = bool(streaming)
        if self._over:
            producer.stopProducing()
        elif streaming:
            if self._paused:
                producer.pauseProducing()
        else:
            self._schedule_pull()

    def unregisterProducer(self):
        self._producer = None

    def write(self, data):
        """Bytes of the stream, in pieces of any size."""
        if self._over:
            return  # stopped: what a producer still writes goes nowhere
        self._hash.update(data)
        if not self._partial and len(data) == DATA_CHUNK:
            return self._send(data)  # a whole record, without a copy
        self._partial += data
        while len(self._partial) >= DATA_CHUNK:
            self._send(bytes(self._partial[:DATA_CHUNK]))
            del self._partial[:DATA_CHUNK]
        if self._partial and (self._flush_call is None or not self._flush_call.active()):
            # what is left goes at the turn's end: joined with what else
            # the turn writes, never held longer
            self._flush_call = self._clock.callLater(0, self._flush)

    def finish(self):
        """The stream's end: the rest goes, then our FileAcknowledge."""
        if self._over:
            return
        self._flush()
        self._end()
        self._producer = None
        self._file_sent(self._sent, self._hash.digest())
        self._all_sent()

    def fail(self, reason):
        """The input failed (or was ended early): the receiver hears
        ``reason`` and the offer fails with StreamInputFailed."""
        if self._over:
            return
        self._end()
        self._producer = None
        self._failed(StreamInputFailed(f"the stream's input failed after {self._sent} "
                                       f"bytes: {reason}"))

    # -- the records ----------------------------------------------------------------
    def _send(self, chunk):
        self._transport.write(b"\x05" + chunk)  # M.KIND_FILE_DATA
        self._sent += len(chunk)
        self._progress(len(chunk))

    def _flush(self):
        if self._partial and not self._over:
            with _framing.burst(self._transport):
                self._send(bytes(self._partial))
            self._partial.clear()

    def _schedule_pull(self):
        if self._pull_call is None or not self._pull_call.active():
            self._pull_call = self._clock.callLater(0, self._pull)

    def _pull(self):
        # a pull producer writes once per resumeProducing(): asked while the
        # subchannel has room, up to a turn's budget (then other work runs)
        budget = TURN_BUDGET
        while (self._producer is not None and not self._streaming and not self._paused
               and not self._over and budget > 0):
            before = self._sent + len(self._partial)
            self._producer.resumeProducing()
            wrote = self._sent + len(self._partial) - before
            if wrote <= 0:
                break
            budget -= wrote
        if (self._producer is not None and not self._streaming and not self._paused
                and not self._over):
            self._schedule_pull()
