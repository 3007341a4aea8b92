"""The Twisted Protocols on the session's subchannels: thin shells that
carry bytes between a subchannel and a machine (``_receiving``,
``_sending``) and hold the bound on the peer's silence. What they share
with their session is one ``OfferContext``, given at construction; they
read nothing else of it."""
import attr
from twisted.internet.protocol import Protocol
from twisted.python import failure
from zope.interface import implementer

from .._guarded import DisplayGuard
from .._inactivity import Watchdog, silence
from .._observer import OneShotObserver
from . import _features, _framing, _receiving, _sending, _source, _stream_source
from . import _messages as M
from ._incoming import IncomingOffer
from ._interfaces import IOfferChannel, IOfferReceiverDelegate, IOfferSenderDelegate
from ._receiving import OfferRefused
from ._stream_sink import SubchannelPacer

# what a sender of a stream hears from a receiver that did not declare the
# "stream" feature (it sent one anyway)
NO_STREAMS = ('this receiver takes no streams (it did not declare the transfer-v2 '
              '"stream" feature)')


@attr.s(frozen=True)
class OfferContext:
    """What every offer subchannel of one session uses, once negotiated."""
    reactor = attr.ib()
    negotiated = attr.ib()  # _versions.Negotiated
    eq = attr.ib()  # the session's EventualQueue
    run_hashing = attr.ib()  # where kept bytes are hashed (_hashing)
    free_space = attr.ib()
    turns = attr.ib()  # _turns.TurnEnd
    offers = attr.ib()  # _offers.Offers
    # the bound on the peer's silence, and what ends its message
    inactivity_timeout = attr.ib(default=None)
    timeout_hint = attr.ib(default="")


class ControlProtocol(Protocol):
    """One control subchannel: ``received(data)`` for what it brings,
    ``lost()`` when it closes."""

    def __init__(self, received, lost):
        self._received = received
        self._lost = lost

    def dataReceived(self, data):
        self._received(data)

    def connectionLost(self, reason=None):
        self._lost()


class _OfferProtocol(Protocol):
    """What both ends of an offer subchannel share: the subchannel as the
    machine's ``write``/``close``, and the bound on the peer's silence
    (docs/security.md "transfer-v2"): while we wait for the peer, an offer
    gives up after the session's ``inactivity_timeout`` seconds in which
    nothing came from it, is cancelled (the peer hears why) and its
    subchannel closed. ``_watch(what)`` starts counting, each record from
    the peer (and ``_heard()``) starts the silence again."""

    _watchdog = None
    _ended_by_us = False
    _pipe = None  # (reader, writer) of the subchannel's records: _records()

    def __init__(self, context):
        self._context = context

    def _records(self):
        # the one place this subchannel's bytes come and go: records
        # framed by their length when both declared "framed-records"
        # (docs/transfer-v2.md "Record framing"), else one per delivery
        if self._pipe is None:
            self._pipe = _framing.pipe(self.transport,
                                       self._context.negotiated.framed_records)
        return self._pipe

    def _watch(self, what):
        self._unwatch()
        seconds = self._context.inactivity_timeout
        if seconds is not None:
            self._watchdog = Watchdog(self._context.reactor, seconds,
                                      lambda: self._silent(what, seconds))

    def _unwatch(self):
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None

    def _heard(self):
        if self._watchdog is not None:
            self._watchdog.kick()

    def _silent(self, what, seconds):
        self._watchdog = None
        self.cancel(str(silence(what, seconds, self._context.timeout_hint)))
        self._close()

    def write(self, data):
        self._records()[1].write(data)

    def _close(self):
        # through the writer: what a burst gathered goes out before the
        # close (a FramedWriter), never after it
        self._records()[1].loseConnection()

    def dataReceived(self, data):
        self._heard()
        try:
            records = self._records()[0].feed(data)
        except _framing.FramingError as e:
            return self.machine.bad_bytes(e)
        # our answers to these records (FileAcknowledges), and to the
        # others this reactor turn delivers, go out together at its end
        with self._context.turns.answering(self._records()[1]):
            for record in records:
                self.machine.got_record(record)

    def connectionLost(self, reason=None):
        if self._pipe is not None:
            _framing.lost(self._pipe[1])  # answers held for the turn's end: dropped
        self.machine.lost()

    def close(self):
        self._close()

    def cancel(self, reason):
        self.machine.cancel(reason)

    def session_over(self, reason):
        """Our session ends: the offer is cancelled by us (not refused)."""
        self._ended_by_us = True
        self.cancel(reason)


@implementer(IOfferChannel)
class Channel:
    """An offer subchannel as a machine writes to it."""

    def __init__(self, protocol):
        self._protocol = protocol

    def write(self, record):
        self._protocol.write(record)

    def close(self):
        self._protocol.close()


@implementer(IOfferReceiverDelegate)
class OfferInProtocol(_OfferProtocol):
    """An offer subchannel the peer opened, and the OfferReceiver's
    application side (wired once, here)."""

    def __init__(self, context):
        super().__init__(context)
        self.incoming = None
        self._done = OneShotObserver(context.eq)
        # the application's display (IncomingOffer.progress, .file_started)
        self._display = DisplayGuard("an incoming offer")
        self.machine = _receiving.OfferReceiver(context.run_hashing)
        self.machine.wire(Channel(self), self)

    def accepted(self):
        self._watch("the sender's data")
        self.incoming.note_answer_sent()

    def file_started(self, path, size, offset):
        self._display(self.incoming.file_started, path, size, offset)

    def resumed(self, nbytes):
        self.incoming.note_held(nbytes)

    def ask(self, offer):
        self._unwatch()  # our application decides: no wait on the peer
        negotiated = self._context.negotiated
        self.incoming = IncomingOffer(_features.incoming(offer, negotiated), self.machine,
                                      self._done, self._context.free_space,
                                      negotiated.resume, negotiated.file_modes, self._pacer)
        if isinstance(offer, M.StreamOffer) and not negotiated.stream:
            # a stream from a peer we never told we take one: refused,
            # naming what is missing (docs/transfer-v2.md "Streams")
            return self.machine.reject(NO_STREAMS)
        self._context.offers.ask(self.incoming, negotiated)

    def _pacer(self):
        # a consumer's stop may come from inside its write(): the cancel
        # waits for the record being handled to end
        return SubchannelPacer(self.transport,
                               lambda reason: self._context.eq.eventually(self.cancel, reason))

    def progress(self, nbytes):
        self._display(self.incoming.progress, nbytes)

    def finished(self, result):
        self._unwatch()
        self._context.offers.finished(self)
        if self.incoming is not None:
            self.incoming.note_answer_sent()
        elif isinstance(result, Exception) and not self._ended_by_us:
            # the offer never became known (a record over the limits, a
            # malformed one, a protocol error, the peer's silence): no
            # IncomingOffer can say so, the session does
            self._context.offers.refused(OfferRefused(
                f"refused an offer from the peer before it was known: {result}"))
        self._done.fire(failure.Failure(result) if isinstance(result, Exception) else result)

    def connectionMade(self):
        self._context.offers.opened(self, theirs=True)
        self._watch("the sender's offer")


@implementer(IOfferSenderDelegate)
class OfferOutProtocol(_OfferProtocol):
    """An offer subchannel we opened, and the OfferSender's side (wired
    once, here)."""

    def __init__(self, context, outgoing, done, progress, file_started=None, resumed=None):
        super().__init__(context)
        outgoing = _features.outgoing(outgoing, context.negotiated)
        self._outgoing = outgoing
        self._done = done
        # the application's display, called from the protocol: guarded
        display = DisplayGuard("an offer")
        self._progress = display.wrap(progress)
        self._file_started = file_started and display.wrap(file_started)
        self._resumed = resumed and display.wrap(resumed)
        # a stream is never resumed: an accept asking for it is a plain one
        self.machine = _sending.OfferSender(
            outgoing.offer, resumable=context.negotiated.resume and not isinstance(
                outgoing, _stream_source.OutgoingStream))
        self.machine.wire(Channel(self), self)

    def check_resume(self, accept):
        return self._context.run_hashing(
            lambda cancelled: _source.resume_point(self._outgoing, accept, cancelled))

    def start_streaming(self, resume):
        # accepted: from now on the receiver must take our bytes (its flow
        # control lets each chunk go) and acknowledge them
        self._watch("the receiver to take or acknowledge the data")
        if self._resumed is not None and resume is not None and resume.held:
            self._resumed(resume.held)  # before any byte: a display counts them as done
        if isinstance(self._outgoing, _stream_source.OutgoingStream):
            streamer = _stream_source.StreamPump(
                self._context.reactor, self._records()[1], self._outgoing.source,
                self.machine.file_sent, self.machine.all_sent, self.machine.input_failed,
                self._sent)
        else:
            streamer = _source.Streamer(self._context.reactor, self._records()[1],
                                        self._outgoing, self.machine.file_sent,
                                        self.machine.all_sent, self.machine.source_failed,
                                        self._sent, resume, self._file_started)
        streamer.start()
        return streamer

    def _sent(self, nbytes):
        self._heard()
        self._progress(nbytes)

    def finished(self, result):
        self._unwatch()
        self._context.offers.finished(self)
        if isinstance(result, Exception):
            self._done.errback(failure.Failure(result))
        else:
            self._done.callback(result)

    def connectionMade(self):
        self._context.offers.opened(self, theirs=False)
        self.machine.connected()
