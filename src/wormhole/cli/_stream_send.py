"""``wormhole send -``: standard input as a transfer-v2 stream (the
"stream" feature, docs/transfer-v2.md "Streams"; docs/cli.md "Streams"):
any length, bounded memory, read only as fast as the receiver's output
drains.

Standard input is a Twisted file descriptor (``InputReader``), the push
producer of the library's stream: Dilation's flow control pauses it
(stops reading) when the receiver's consumer is slow, so nothing reads
ahead without bound and no thread is involved. A peer that cannot take a
stream (the classic protocol, or a transfer-v2 without the feature) is
refused before anything is read, with a line naming what it lacks, and
told so in the mailbox.
"""
import fcntl
import os

from twisted.internet import abstract, defer, error, fdesc, main

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import STREAM_NEEDS_V2, naturalsize
from ..transfer import Declined
from ..util import dict_to_bytes
from ._send_paths import rejected
from ._sending import send_v2_or_classic
from ._v2_session import check_transit_helper
from .ui.progress import OfferProgress
from .ui.screen import say
from .ui.wording import TEXT_SENT

# what the stream is called in its offer (the receiver shows it)
STDIN_NAME = "stdin"
# what a classic receiver is told (it shows the sender's words as they are)
TO_CLASSIC = ("the sender offers a stream (wormhole send -), which the classic protocol "
              "cannot carry: it needs a size before the first byte (nothing was sent)")
# the longest ``send --text -`` that goes in the mailbox, as classic's text
# offer: the Mailbox server takes messages up to 1 MiB, a text's bytes
# travel hex-encoded inside JSON (docs/cli.md "Streams")
MAILBOX_TEXT = 256 * 1024
# one read: a whole data record (transfer_v2's DATA_CHUNK)
READ_SIZE = 65505


class InputReader(abstract.FileDescriptor):
    """File descriptor ``fd`` (standard input), read without blocking into
    ``consumer`` (the library's stream), which it registers with as a
    streaming producer: a pause stops reading. Its end finishes the
    stream; a read error fails it. The descriptor's flags are given back
    when reading ends (a terminal's blocking mode is the shell's too)."""

    def __init__(self, reactor, fd, consumer):
        super().__init__(reactor)
        self._fd = fd
        self._consumer = consumer
        self._flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fdesc.setNonBlocking(fd)
        self.connected = 1
        consumer.registerProducer(self, True)
        self.startReading()

    def fileno(self):
        return self._fd

    def doRead(self):
        try:
            data = os.read(self._fd, READ_SIZE)
        except BlockingIOError:
            return None
        except OSError as e:
            return e
        if not data:
            return main.CONNECTION_DONE
        self._consumer.write(data)
        return None

    def restore(self):
        """The descriptor's flags as they were (again is harmless)."""
        try:
            fcntl.fcntl(self._fd, fcntl.F_SETFL, self._flags)
        except OSError:
            pass

    def stopProducing(self):
        # the offer is over: reading stops (standard input is not ours to close)
        self.stopReading()
        self.connected = 0
        self.restore()

    def connectionLost(self, reason):
        self.stopReading()
        self.connected = 0
        self.restore()
        self._consumer.unregisterProducer()
        if reason.check(error.ConnectionDone):
            self._consumer.finish()
        else:
            self._consumer.fail(f"reading standard input failed: {reason.getErrorMessage()}")


class LongText:
    """``send --text -`` read more than MAILBOX_TEXT bytes: ``head`` is
    what was read; the rest is still in standard input."""

    def __init__(self, head):
        self.head = head


def read_text(cfg):
    """``send --text -``'s standard input: the text (a str) when it ends
    within MAILBOX_TEXT bytes, else a LongText (docs/cli.md "Streams").
    Read from the descriptor, so that nothing past the head waits in a
    buffer the stream would not see."""
    try:
        fd = cfg.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return cfg.stdin.read()  # no descriptor (a test's StringIO): read whole
    chunks, n = [], 0
    while n <= MAILBOX_TEXT:
        data = os.read(fd, MAILBOX_TEXT + 1 - n)
        if not data:
            break
        chunks.append(data)
        n += len(data)
    head = b"".join(chunks)
    if n > MAILBOX_TEXT:
        return LongText(head)
    text = head.decode(getattr(cfg.stdin, "encoding", None) or "utf-8",
                       getattr(cfg.stdin, "errors", None) or "strict")
    # as sys.stdin.read() gave it (universal newlines), and the reference sends it
    return text.replace("\r\n", "\n").replace("\r", "\n")


def send_stream(reactor, cfg, long_text=None):
    """Send standard input as a stream (``long_text``, a LongText: the
    rest of a long ``--text -``, as a text stream): transfer-v2 with the
    "stream" feature, or a refusal naming what the peer lacks."""
    check_transit_helper(cfg)
    what = _Text() if long_text is not None else _Data()
    say(cfg, what.sending)

    def classic(cfg, w):
        raise AssertionError("refused before")  # refuse_classic raised

    def refuse_classic(w, reason):
        # the classic receiver waits for an offer: it is told why none comes
        w.send_message(dict_to_bytes({"error": what.to_classic}))
        raise T.StreamRefused(what.classic_refused)

    @defer.inlineCallbacks
    def over_v2(session, path, w):
        try:
            yield offer_stdin(reactor, cfg, session, path, w, what,
                              long_text.head if long_text is not None else b"")
        finally:
            yield session.close()
    return send_v2_or_classic(reactor, cfg, classic=classic, over_v2=over_v2,
                              refuse_classic=refuse_classic, with_wormhole=True)


class _Data:
    """What ``send -`` says."""
    name = STDIN_NAME
    text = False
    sending = "Sending standard input as a stream (its length is known at its end)"
    to_classic = TO_CLASSIC
    classic_refused = STREAM_NEEDS_V2
    to_featureless = ('a stream needs the transfer-v2 "stream" feature, which this '
                      "receiver lacks (nothing was sent)")

    def refused(self, error):
        return str(error)

    def sent(self, nbytes):
        return f"Stream sent: {_amount(nbytes)}, confirmed by the receiver (length and hash)"


class _Text:
    """What ``send --text -`` of a long text says."""
    name = "text"
    text = True
    sending = (f"Sending a long text message (over {MAILBOX_TEXT} bytes, more than the "
               "mailbox carries) as a stream")
    to_classic = (f"the sender's text is longer than {MAILBOX_TEXT} bytes, more than the "
                  "mailbox carries, and the classic protocol has no other way for a "
                  "text (nothing was sent)")
    classic_refused = (f"the text is longer than {MAILBOX_TEXT} bytes, more than the mailbox "
                       "carries, and the receiver speaks only the classic protocol, which "
                       "has no other way for a text (nothing was sent)")
    to_featureless = (f"the sender's text is longer than {MAILBOX_TEXT} bytes: it needs the "
                      'transfer-v2 "stream" feature, which this receiver lacks (nothing '
                      "was sent)")

    def refused(self, error):
        return (f"the text is longer than {MAILBOX_TEXT} bytes, more than the mailbox "
                'carries, and the receiver\'s transfer-v2 lacks the "stream" feature (nothing '
                "was sent)")

    def sent(self, nbytes):
        return TEXT_SENT


@defer.inlineCallbacks
def offer_stdin(reactor, cfg, session, path, w, what, head=b""):
    """The stream offer of standard input on ``session`` (after ``head``,
    read already), its progress (bytes and rate, no total) and what to
    say at its end."""
    meter = OfferProgress(reactor, cfg, path, ("Sending", "Sent"), None, "stream")
    readers = []

    def start(consumer):
        if head:
            consumer.write(head)
        readers.append(InputReader(reactor, cfg.stdin.fileno(), consumer))
    try:
        result = yield session.offer_stream(start, what.name, progress=meter.update,
                                            text=what.text)
    except T.StreamRefused as e:
        w.send_message(dict_to_bytes({"error": what.to_featureless}))
        raise TransferError(what.refused(e)) from None
    except T.OfferRejected as e:
        if e.reason == T.STOPPED_READING:
            raise Declined(f"the receiver stopped reading the stream after "
                           f"{_amount(meter.moved)} were sent (its output was closed)") from None
        raise rejected(e.reason) from None
    except T.StreamInputFailed as e:
        raise TransferError(str(e)) from None
    except TransferError as e:
        raise TransferError(f"the receiver went away after {_amount(meter.moved)} of the "
                            f"stream were sent ({e})") from None
    finally:
        meter.close()
        for reader in readers:
            reader.restore()
    say(cfg, what.sent(result.bytes))
    if not what.text:
        say(cfg, meter.summary())


def _amount(nbytes):
    """"1234567 bytes (1.2 MB)": exact, for a stream nobody knew the size of."""
    return f"{nbytes} bytes ({naturalsize(nbytes)})"
