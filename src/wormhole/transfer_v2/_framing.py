"""Records framed by their own length on an offer subchannel (the
``framed-records`` feature, docs/transfer-v2.md "Record framing").

The text calls subchannels "record pipes", but what a peer delivers is
not always one whole record per ``dataReceived``: our Dilation sends a
write over ``_dilation._outbound.MAX_DATA_RECORD`` (1 MiB) as several DATA
records, so a large DirectoryOffer or a resume accept carrying many
digests arrives in pieces. When both peers declare the feature, every
record on an offer subchannel goes as a 4-byte big-endian length (of the
kind byte and the payload), then the record; the reader gives back whole
records whatever the deliveries were (split anywhere, several in one).

Sans-I/O: ``Deframer.feed(bytes)`` returns the records completed so far
(``FramingError`` for a length this protocol never sends, checked before
anything of that record is kept), ``frame(record)`` is the writer's side.
``Unframed`` is the way of a peer without the feature (one delivery, one
record). ``pipe(transport, framed)`` gives an offer subchannel's reader
and writer.
"""
import contextlib
import struct

from .._dilation._framing import NOISE_MAX_PLAINTEXT
from .._dilation._records import DATA_HEADER
from . import _messages as M
from ._versions import FRAMED_RECORDS as FEATURE

_LENGTH = struct.Struct(">I")
HEADER = _LENGTH.size
# the largest record of each kind, kind byte included (docs/transfer-v2.md
# "Limits"): data per the text's 65536, a DirectoryOffer and an
# OfferAccept (its resume digests) up to MAX_OFFER_RECORD, anything else
# (the other kinds, and unknown ones, which the parser then refuses) up
# to MAX_CONTROL_MESSAGE
MAX_RECORD = 1 + M.MAX_OFFER_RECORD
_LIMITS = {M.KIND_FILE_DATA: 1 + M.MAX_DATA_PAYLOAD,
           M.KIND_DIRECTORY_OFFER: MAX_RECORD,
           M.KIND_OFFER_ACCEPT: MAX_RECORD}
_OTHER_LIMIT = 1 + M.MAX_CONTROL_MESSAGE
# the longest record that reaches a peer without the feature whole: our
# earlier releases' Dilation splits a longer write
# (_dilation/_outbound.MAX_DATA_RECORD), their reader takes each piece
# for a record
UNFRAMED_MAX = 1024 * 1024


class FramingError(M.MessageError):
    """A frame announced a record this protocol never sends."""


def limit_for(kind):
    """The longest record of ``kind`` (its first byte) a peer may frame."""
    return _LIMITS.get(kind, _OTHER_LIMIT)


def refusal(record, framed):
    """Why our ``record`` (an offer) cannot go to this peer, or None."""
    limit = MAX_RECORD if framed else UNFRAMED_MAX
    if len(record) <= limit:
        return None
    if framed:
        return (f"its file list takes {len(record)} bytes, more than the {limit} "
                "a receiver accepts")
    return (f"its file list takes {len(record)} bytes; the peer's transfer-v2 (an "
            f"earlier release, without \"{FEATURE}\") receives at most {limit}")


def frame(record):
    """``record`` (kind byte and payload) as it goes on the subchannel."""
    return _LENGTH.pack(len(record)) + record


def _check(head):
    """The record length in a frame's first bytes (at least HEADER; with
    one more, the kind byte is checked too), or FramingError."""
    length = _LENGTH.unpack_from(head)[0]
    if length == 0:
        raise FramingError("an empty record (a frame of length 0)")
    if length > MAX_RECORD:
        raise FramingError(f"a record of {length} bytes (at most {MAX_RECORD})")
    if len(head) > HEADER and length > limit_for(head[HEADER]):
        raise FramingError(f"a record of kind {head[HEADER]} of {length} bytes "
                           f"(at most {limit_for(head[HEADER])})")
    return length


class Deframer:
    """Bytes in, whole records out. Records that arrived whole within one
    delivery are handed out as views of it (no copy); only a record split
    across deliveries is gathered, after its length was checked."""

    def __init__(self):
        self._partial = bytearray()  # the start of a frame not yet complete
        self._failed = False

    def feed(self, data):
        """The records completed by ``data`` (memoryviews, in order). After
        a FramingError the stream has no boundaries left: nothing more."""
        if self._failed:
            return []
        try:
            return self._feed(data)
        except FramingError:
            self._failed = True
            self._partial = bytearray()
            raise

    def _feed(self, data):
        if not isinstance(data, bytes):  # a view of a buffer its owner may reuse
            data = bytes(data)
        view = memoryview(data)
        records = []
        if self._partial:
            view = self._complete(view, records)
        pos, end = 0, len(view)
        while end - pos > HEADER:
            stop = pos + HEADER + _check(view[pos:pos + HEADER + 1])
            if stop > end:
                break
            records.append(view[pos + HEADER:stop])
            pos = stop
        if pos < end:
            if end - pos >= HEADER:
                _check(view[pos:end])
            self._partial = bytearray(view[pos:end])
        return records

    def _complete(self, view, records):
        """Add to the frame begun in an earlier delivery; what is left of
        ``view`` after it (empty when the frame is still incomplete)."""
        partial = self._partial
        if len(partial) <= HEADER:  # its length and kind are not all known yet
            take = HEADER + 1 - len(partial)
            partial += view[:take]
            view = view[take:]
            if len(partial) < HEADER:
                return view
            _check(partial)
            if len(partial) <= HEADER:
                return view
        total = HEADER + _LENGTH.unpack_from(partial)[0]
        take = total - len(partial)
        partial += view[:take]
        if len(partial) == total:
            records.append(memoryview(partial)[HEADER:])
            self._partial = bytearray()  # the record keeps the old buffer
        return view[take:]


class Unframed:
    """The way of a peer without the feature: each delivery is one record."""

    def feed(self, data):
        return [data]


# the most one subchannel write carries in one Noise message: our
# Dilation sends a write as one DATA record, and a record whose
# plaintext (its header and the write) fits 65519 bytes is one Noise
# message, one AEAD call on each side
# (Dilation protocol, "L2 Message Framing"); a byte more makes a second
# message, which the receiver must also join to the first (a copy). The
# Streamer's data frames (_source.DATA_CHUNK) and a burst's batches stay
# within it (docs/transfer-v2.md, "Per-record work").
ONE_MESSAGE = NOISE_MAX_PLAINTEXT - DATA_HEADER
# a burst's frames go out together up to this many bytes
BATCH_BYTES = ONE_MESSAGE


class FramedWriter:
    """An offer subchannel's transport for the machines and the Streamer:
    ``write(record)`` sends the record framed; the producer calls and
    ``loseConnection`` are the transport's.

    Within a ``burst`` (one turn of the Streamer, one delivery to the
    receiving machine) frames are gathered and written together, up to
    ``BATCH_BYTES`` at a time (what was gathered goes first when the next
    frame would take it past that): the text lets several records follow each
    other, and framing marks their bounds, so a small file's header, data
    and FileAcknowledge, or the receiver's acknowledgements of several
    files, make one subchannel write, one Dilation record and one ACK
    instead of one each (per Dilation record both sides spend more CPU
    than on a small file's bytes: docs/transfer-v2.md, "Per-record work").
    A frame of ``BATCH_BYTES`` or more goes out as it is, without a copy,
    after what was gathered. Nothing is held past the burst, or, for the
    answers to what was received (``answers``), past the reactor turn."""

    def __init__(self, transport):
        self._transport = transport
        self._held = None  # frames of the burst not written yet
        self._held_bytes = 0

    def write(self, record):
        data = frame(record)
        if self._held is None:
            self._transport.write(data)
            return
        if self._held_bytes + len(data) > BATCH_BYTES:
            self._flush()  # a batch stays one Noise message
        if len(data) >= BATCH_BYTES:  # (nothing is held now)
            self._transport.write(data)
            return
        self._held.append(data)
        self._held_bytes += len(data)

    def connection_lost(self):
        """The subchannel is gone (the peer closed it within the turn): what
        was held for the turn's end has nobody to read it, and a write
        now would be refused; it is dropped."""
        self._held = None
        self._held_bytes = 0

    def _end_turn(self):
        self._flush()
        self._held = None

    def write_held(self):
        """What is gathered so far goes now, ahead of a write elsewhere
        that must follow it (the session's control close); the gathering
        goes on."""
        self._flush()

    def room(self):
        """The most data payload whose frame still fits the batch being
        gathered, or None when nothing is held (a full frame goes alone)."""
        if not self._held:
            return None
        return BATCH_BYTES - self._held_bytes - HEADER - 1

    def _flush(self):
        held = self._held
        if held:
            self._held = []
            self._held_bytes = 0
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def gathered(self, call_later=None):
        """A context manager: gather the frames written meanwhile (nested:
        the outermost writes them when it ends, also when it ends with an
        exception). With ``call_later`` (a reactor's), what the outermost
        gathered is written at the end of the reactor turn instead, with
        whatever later deliveries of the turn add to it; only when
        something was gathered is that call made. A class, not a
        generator: it is entered once per delivery, every 64 KiB of a
        large file (docs/transfer-v2.md, "Per-record work")."""
        return _Gathering(self, call_later)

    def registerProducer(self, producer, streaming):  # noqa: N802 (Twisted's name)
        self._transport.registerProducer(producer, streaming)

    def unregisterProducer(self):  # noqa: N802
        self._transport.unregisterProducer()

    def loseConnection(self):  # noqa: N802
        # what was written before the close goes first; a write after it
        # goes to the transport at once, as without a burst
        self._flush()
        self._held = None
        self._transport.loseConnection()


class _Gathering:
    __slots__ = ("_writer", "_call_later", "_outermost")

    def __init__(self, writer, call_later):
        self._writer = writer
        self._call_later = call_later

    def __enter__(self):
        writer = self._writer
        self._outermost = writer._held is None
        if self._outermost:
            writer._held = []

    def __exit__(self, *exc_info):
        if self._outermost:
            writer = self._writer
            if writer._held and self._call_later is not None and exc_info[0] is None:
                # held (not None) until then: the turn's later deliveries add to it
                self._call_later(0, writer._end_turn)
            else:
                writer._end_turn()
        return False


def answers(writer, call_later):
    """``burst`` for what we write while handling what the peer sent: it
    leaves at the end of the reactor turn (``call_later``), so the
    answers to every delivery one read of the connection brought go
    together: one FileAcknowledge per file, as the text requires, but
    not one Dilation record each (docs/transfer-v2.md, "Per-record work").
    A close writes it first."""
    gathered = getattr(writer, "gathered", None)
    return gathered(call_later) if gathered is not None else contextlib.nullcontext()


def burst(writer):
    """Gather ``writer``'s frames while the ``with`` block runs (a
    FramedWriter's ``gathered``); a peer without the feature takes each
    write for a record, so its writes go out one by one."""
    gathered = getattr(writer, "gathered", None)
    return gathered() if gathered is not None else contextlib.nullcontext()


def write_held(writer):
    """Write now what ``writer`` gathered so far (a FramedWriter's
    ``write_held``; nothing is held for a peer without the feature)."""
    held = getattr(writer, "write_held", None)
    if held is not None:
        held()


def lost(writer):
    """``writer.connection_lost()`` for a FramedWriter (nothing is held
    for a peer without the feature)."""
    connection_lost = getattr(writer, "connection_lost", None)
    if connection_lost is not None:
        connection_lost()


def room_of(writer):
    """A function telling how much data payload still fits the batch
    ``writer`` is gathering (``FramedWriter.room``), or always None."""
    return getattr(writer, "room", None) or (lambda: None)


def pipe(transport, framed):
    """(reader, writer) of an offer subchannel: framed when both peers
    declared the feature, else one record per delivery and per write."""
    if framed:
        return Deframer(), FramedWriter(transport)
    return Unframed(), transport
