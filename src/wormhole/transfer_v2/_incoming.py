"""An offer from the peer as the application sees it: decided on with
``accept`` or ``reject`` (docs/transfer-v2.md "Library API")."""
from twisted.internet import defer, interfaces

from .. import _landing
from ..errors import TransferError
from . import _messages as M
from . import _sink
from ._interfaces import IResumableSink
from ._receiving import OfferAlreadyAnswered
from ._stream_sink import StreamSink


class IncomingOffer:
    """An offer from the peer, handed to ``on_offer``. Call ``accept(folder)``
    or ``reject(reason)`` (now or later); ``when_done()`` fires with a
    ``Received`` or ``Rejected`` or fails (``HashMismatch``, ...).
    ``progress`` may be replaced by a callable taking a byte count, and
    ``file_started`` by one taking (path segments, size, offset): each file
    of a directory offer as it begins (its bytes from ``offset`` on then
    come as ``progress``). A stream (``is_stream``, the "stream" feature)
    has no size and is taken with ``accept_stream(consumer)``."""

    def __init__(self, offer, machine, done, free_space, resumable, modes=False,
                 pacer=None):
        self.offer = offer
        # for a stream: a new SubchannelPacer of the offer's subchannel
        self._pacer = pacer
        self._modes = modes
        self._answered = None  # accept()'s Deferred, until our answer is out
        self._machine = machine
        self._done = done
        self._free_space = free_space
        self._resumable = resumable
        self.progress = lambda nbytes: None
        self.file_started = lambda segments, size, offset: None
        # after accept(): how many of the offer's bytes (and, for a folder,
        # whole files) an earlier session left for us to resume after (0:
        # none); for a file the byte it resumes at
        self.resumed_from = 0
        # the bytes of the offer this session does not receive: what we
        # asked (resumed_from), then what the sender's answer keeps (less
        # when kept files changed at the sender or it starts over)
        self.held = 0
        self.resumed_files = 0
        self.sink = None
        self.refused = None  # why accept() could not take it
        self.refusal = None  # ... as the receiving rules' exception (_landing.Refused)

    @property
    def is_directory(self):
        return isinstance(self.offer, M.DirectoryOffer)

    @property
    def is_stream(self):
        return isinstance(self.offer, M.StreamOffer)

    @property
    def size(self):
        """The offered bytes; None for a stream (nobody knows them yet)."""
        if self.is_stream:
            return None
        return self.offer.size if self.is_directory else self.offer.bytes

    def accept_stream(self, consumer):
        """Take a stream into ``consumer`` (an ``IConsumer``: each data
        record is written to it as it comes; the offer's subchannel is
        registered with it as a streaming producer, so its pauses pace
        the sender, and its ``stopProducing`` cancels the stream).
        ``when_done()`` says whether the sender's end matched what the
        consumer got. Returns a Deferred that fires once our accept is out."""
        if not self.is_stream:
            raise TransferError("not a stream: accept() a file or directory offer")
        return self._answer(lambda: StreamSink(interfaces.IConsumer(consumer), self._pacer()))

    def accept(self, folder, name=None, peer_reason=None):
        """Receive into ``folder`` (under ``name`` instead of the offered
        one, if given); a Refused (an unusable name, exists, no room: the
        receiving rules of ``wormhole._landing``, classic receive's too)
        becomes a reject: the exception is kept in ``refusal``, its reason
        in ``refused``, and that reason is sent to the peer, or
        ``peer_reason`` is sent instead (the CLI says only "transfer
        rejected", as classic receive does). Returns a Deferred that fires
        with this IncomingOffer once our answer is out: with the "resume"
        feature that is after what an earlier session left was checked
        (hashed, in a thread); ``resumed_from``, ``resumed_files`` and
        ``discarded`` are known from then on."""
        if self.is_stream:
            raise TransferError("a stream has no file to go to: accept_stream(consumer)")
        return self._answer(lambda: _sink.sink_for(
            self.offer, folder, self._free_space, name, resumable=self._resumable,
            modes=self._modes), peer_reason)

    def _answer(self, make_sink, peer_reason=None):
        first = (self._answered, self.sink, self.refusal, self.refused)
        self._answered = defer.Deferred()
        answered = self._answered
        try:
            try:
                sink = make_sink()
            except _landing.Refused as e:
                self.refusal = e
                self.refused = str(e)
                self._machine.reject(peer_reason or self.refused)
                return answered
            self.sink = sink
            self._machine.accept(sink)
        except OfferAlreadyAnswered:
            # a second answer: the first one's Deferred and sink stay
            self._answered, self.sink, self.refusal, self.refused = first
            raise
        return answered

    def note_held(self, nbytes):
        """Called by the offer's protocol: the sender's answer to our
        resume (or a later header) says how many bytes of the offer we
        keep: ``held`` follows."""
        self.held = nbytes

    def note_answer_sent(self):
        """Called by the offer's protocol: our accept went out, or the offer ended before it did."""
        answered, self._answered = self._answered, None
        if answered is None:  # said already (or never accepted)
            return
        resume = self.sink.resume if IResumableSink.providedBy(self.sink) else None
        if resume is not None:
            self.resumed_from = self.held = resume.bytes
            self.resumed_files = resume.files or 0
        answered.callback(self)

    @property
    def discarded(self):
        """Why bytes kept from an earlier session were discarded, or None."""
        return self.sink.discarded if IResumableSink.providedBy(self.sink) else None

    def reject(self, reason="rejected"):
        """Refuse the offer, telling the peer ``reason``."""
        self._machine.reject(reason)

    def when_done(self):
        """A Deferred that fires with the offer's outcome once it is over."""
        return self._done.when_fired()
