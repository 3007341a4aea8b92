"""``wormhole receive --stdout`` (``-o -``): a transfer-v2 stream written to
standard output as it comes (the "stream" feature, docs/transfer-v2.md
"Streams"; docs/cli.md "Streams"). Nothing else goes to standard output.

Standard output is a Twisted file descriptor (``OutputWriter``), the
stream's consumer: when the reader of the pipe is slower than the
network its buffer fills, it pauses the offer's subchannel, and
Dilation's flow control carries that back to the sender, which stops
reading its input; memory stays bounded. A reader that goes away (a
closed pipe: ``| head -c 10``) stops the stream cleanly: the sender is
told, and this side exits 0, its reader having what it wanted. A stream
that does not end as the sender's FileAcknowledge says (cut, the sender
gone or its input failed) is an ERROR line saying how many bytes were
written and that a stream cannot be resumed.
"""
import codecs
import fcntl
import os

from twisted.internet import abstract, defer, error, fdesc, interfaces
from zope.interface import implementer

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import escape_text, naturalsize
from ._receiving import Receiving
from .ui.progress import OfferProgress
from .ui.screen import say

NOT_RESUMABLE = "a stream cannot be resumed"


class OutputWriter(abstract.FileDescriptor):
    """File descriptor ``fd`` (standard output) written without blocking,
    buffered up to ``bufferSize`` (then its producer, the offer's
    subchannel, is paused). ``ended`` fires when its writing
    ended: a clean close once the buffer drained, or the reader gone
    (``broken``). Its flags are given back at the end."""

    # what may wait for a slow reader before the subchannel is paused: a
    # pause stops all of Dilation's reading, so not after every record
    # (64 KiB, Twisted's default, paused it every second record)
    bufferSize = 1024 * 1024

    def __init__(self, reactor, fd):
        super().__init__(reactor)
        self._fd = fd
        self._flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        if not os.isatty(fd):
            # a terminal stays blocking: its description is often stderr's
            # too, and stderr's lines must never meet EAGAIN (a terminal
            # drains as fast as a human reads anyway)
            fdesc.setNonBlocking(fd)
        self.connected = 1
        self.ended = defer.Deferred()
        self.broken = False

    def fileno(self):
        return self._fd

    def write(self, data):
        # nothing waits in the buffer: straight to the descriptor, without
        # the buffer's join and a reactor turn per record; what the pipe
        # does not take now is buffered, as FileDescriptor does (its
        # private counters say whether anything waits: docs/performance.md
        # "Streams against files")
        if (self.connected and not self.disconnecting and not self._tempDataLen
                and self.offset >= len(self.dataBuffer)):
            try:
                written = os.write(self._fd, data)
            except OSError:
                written = 0  # full, or the reader gone: the buffered path says which
            if written == len(data):
                return
            data = data[written:]
        super().write(data)

    def writeSomeData(self, data):
        return fdesc.writeToFD(self._fd, data)

    def connectionLost(self, reason):
        # a producer still registered (the stream goes on) is stopped:
        # the library cancels the stream, the sender hears why
        self.broken = not reason.check(error.ConnectionDone)
        super().connectionLost(reason)
        try:
            fcntl.fcntl(self._fd, fcntl.F_SETFL, self._flags)
        except OSError:
            pass
        if not self.ended.called:
            self.ended.callback(None)


@implementer(interfaces.IConsumer)
class TextOut:
    """A text stream (``send --text -`` of a long text) shown as ``wormhole
    receive`` shows a text: decoded as UTF-8 as it comes (an invalid
    sequence as U+FFFD), each character ``escape_text`` escapes escaped
    (a streamed text is shown as it comes: the one whole-text rule of a
    mailbox text, ``\'`` when both quotes occur, cannot apply), a newline
    at its end (``finish``)."""

    def __init__(self, writer):
        self._writer = writer
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def registerProducer(self, producer, streaming):
        self._writer.registerProducer(producer, streaming)

    def unregisterProducer(self):
        self._writer.unregisterProducer()

    def write(self, data):
        self._writer.write(escape_text(self._decoder.decode(data)).encode("utf-8"))

    def finish(self):
        tail = escape_text(self._decoder.decode(b"", final=True))
        self._writer.write((tail + "\n").encode("utf-8"))


class StreamReceiving(Receiving):
    """``Receiving`` that also takes streams: with ``--stdout`` (``-o -``)
    one stream goes to standard output as it is, without a question (the
    question would go there too, and the human asked for the stream), and
    a file or directory offer is refused; without it a text stream is
    shown as a text is, and any other stream refused."""

    def __init__(self, reactor, cfg, ask, path=None):
        super().__init__(reactor, cfg, ask, path)
        self._stream = None  # the accepted stream (an IncomingOffer)
        self._raw = cfg.output_file == "-"

    @defer.inlineCallbacks
    def _decide(self, incoming, number):
        if incoming in self._unanswered:
            return
        if not incoming.is_stream and not self._raw:
            yield super()._decide(incoming, number)
            return
        if not incoming.is_stream or self._stream is not None:
            self._refuse(incoming, "transfer rejected",
                         "--stdout takes one stream (wormhole send -): refused "
                         f"{'a second stream' if incoming.is_stream else 'a file or directory'}")
            return
        if not self._raw and not incoming.offer.text:
            yield super()._decide(incoming, number)  # refused: it says why
            return
        cfg = self._cfg
        writer = OutputWriter(self._reactor, cfg.stdout.fileno())
        self._stream = incoming
        meter = None
        consumer = writer if self._raw else TextOut(writer)
        if self._raw:
            say(cfg, f"Receiving a stream ({escape_text(incoming.offer.filename)!r}) to "
                     "standard output")
            meter = OfferProgress(self._reactor, cfg, self._path, ("Receiving", "Received"),
                                  None, "receive")
            incoming.progress = meter.update
        self._accepted.add(incoming)
        done = incoming.when_done()
        # the command ends once what the writer holds went out
        self.done.append(done)
        self.done.append(writer.ended)
        done.addBoth(self._stream_ended, meter, incoming, writer, consumer)
        yield incoming.accept_stream(consumer)

    def _stream_ended(self, result, meter, incoming, writer, consumer):
        if meter is not None:
            meter.close()
        written = self._written()
        cfg = self._cfg
        if isinstance(result, T.Received) and meter is None:
            self._received_whole.add(incoming)
            consumer.finish()  # a text, whole: its end, as a text's
            writer.loseConnection()
            return
        writer.loseConnection()  # once its buffer drained
        if isinstance(result, T.Received):
            self._received_whole.add(incoming)
            self._count_received(result, meter)
            say(cfg, f"Stream received: {written} bytes ({naturalsize(written)}), the "
                     "sender's length and hash match")
            say(cfg, meter.summary())
        elif writer.broken:
            # our reader went away: it has what it wanted (docs/cli.md "Exit status")
            say(cfg, f"Standard output was closed after {written} bytes: the stream was "
                     "stopped and the sender told")
        else:
            self._failed(self.cut(result.value, written), "Failed")

    def _written(self):
        sink = getattr(self._stream, "sink", None)
        return sink.writer.received if sink is not None and sink.writer is not None else 0

    def cut(self, error, written):
        """The error of a stream that ended before the sender's end: what
        happened, how many bytes were written, and that it cannot resume."""
        return TransferError(f"the stream was cut after {written} bytes "
                             f"({naturalsize(written)}) were written to standard output "
                             f"({error}): {NOT_RESUMABLE}")

    def peer_stopped(self, error):
        """The sender stopped on purpose (its mailbox ``error``): said with
        the bytes written, when a stream was accepted and did not end whole."""
        if self._stream is None or self._stream in self._received_whole:
            return error
        return self.cut(error, self._written())
