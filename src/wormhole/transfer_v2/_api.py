"""The library API of transfer-v2 over a dilated wormhole
(docs/transfer-v2.md "Library API").

    w = wormhole.create(appid, relay, reactor, dilation=True,
                        versions=transfer_v2.app_versions("connect"))
    ...code...
    session = transfer_v2.TransferSession(reactor, w, "connect", on_offer=decide)
    yield session.start()          # PeerUsesClassic: use the classic protocol
    result = yield session.offer("photos/")
    yield session.close()          # then w.close(): the mailbox closes last

Only Dilation's public API is used: ``w.dilate()``, ``listener_for`` and
``connector_for`` with the subprotocol names below, and subchannels as
byte pipes whose records carry their length when both peers declared
"framed-records" (``_framing``; else one ``write`` is taken to arrive
as one ``dataReceived``, as our earlier releases do).
"""
import attr
from twisted.internet import defer
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python import failure
from zope.interface import implementer

from .. import _landing
from .._eventual import EventualQueue
from .._guarded import DisplayGuard
from .._inactivity import Watchdog, silence
from .._observer import OneShotObserver
from .._status import ConnectedPeer
from ..errors import TransferError
from . import _framing, _hashing, _receiving, _sending, _session, _sink, _source, _versions
from . import _messages as M
from ._interfaces import (
    IOfferChannel,
    IOfferReceiverDelegate,
    IOfferSenderDelegate,
    IResumableSink,
    ISessionDelegate,
)
from ._receiving import OfferAlreadyAnswered, OfferRefused

# the spec's "control subchannel #0" and offer subchannels, as Dilation
# subprotocol names (docs/transfer-v2.md "Subchannels")
CONTROL_SUBPROTOCOL = "transfer-v2-control"
OFFER_SUBPROTOCOL = "transfer-v2-offer"
# the peer's offers we hold at once (each waits for a decision or is
# being received); more are rejected rather than queued without bound
MAX_INCOMING_OFFERS = 100

_log = Logger()


class _ControlProtocol(Protocol):
    """One control subchannel: ours (we write) or theirs (we read)."""

    def __init__(self, session, ours):
        self._session = session
        self._ours = ours

    def dataReceived(self, data):
        self._session._got_control(data)

    def connectionLost(self, reason=None):
        self._session._control_lost(self._ours)


class IncomingOffer:
    """An offer from the peer, handed to ``on_offer``. Call ``accept(folder)``
    or ``reject(reason)`` (now or later); ``when_done()`` fires with a
    ``Received`` or ``Rejected`` or fails (``HashMismatch``, ...).
    ``progress`` may be replaced by a callable taking a byte count, and
    ``file_started`` by one taking (path segments, size, offset): each file
    of a directory offer as it begins (its bytes from ``offset`` on then
    come as ``progress``)."""

    def __init__(self, offer, machine, done, free_space, resumable, modes=False):
        self.offer = offer
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
    def size(self):
        return self.offer.size if self.is_directory else self.offer.bytes

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
        first = (self._answered, self.sink, self.refusal, self.refused)
        self._answered = defer.Deferred()
        answered = self._answered
        try:
            try:
                sink = _sink.sink_for(self.offer, folder, self._free_space, name,
                                      resumable=self._resumable, modes=self._modes)
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

    def _resumed(self, nbytes):
        """The sender's answer to our resume (or a later header) says how
        many bytes of the offer we keep: ``held`` follows."""
        self.held = nbytes

    def _answer_sent(self):
        """Our accept went out, or the offer ended before it did."""
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

    def _records(self):
        # the one place this subchannel's bytes come and go: records
        # framed by their length when both declared "framed-records"
        # (docs/transfer-v2.md "Record framing"), else one per delivery
        if self._pipe is None:
            self._pipe = _framing.pipe(self.transport, self._session._framed)
        return self._pipe

    def _watch(self, what):
        self._unwatch()
        seconds = self._session._inactivity_timeout
        if seconds is not None:
            self._watchdog = Watchdog(self._session._reactor, seconds,
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
        self.cancel(str(silence(what, seconds, self._session._timeout_hint)))
        self._close()

    def _write(self, data):
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
        writer = self._records()[1]
        answering = self._session._answering
        answering.append(writer)
        try:
            with _framing.answers(writer, self._session._at_turn_end):
                for record in records:
                    self.machine.got_record(record)
        finally:
            answering.remove(writer)

    def connectionLost(self, reason=None):
        if self._pipe is not None:
            _framing.lost(self._pipe[1])  # answers held for the turn's end: dropped
        self.machine.lost()

    def cancel(self, reason):
        self.machine.cancel(reason)

    def session_over(self, reason):
        """Our session ends: the offer is cancelled by us (not refused)."""
        self._ended_by_us = True
        self.cancel(reason)


@implementer(IOfferChannel)
class _Channel:
    """An offer subchannel as a machine writes to it."""

    def __init__(self, protocol):
        self._protocol = protocol

    def write(self, record):
        self._protocol._write(record)

    def close(self):
        self._protocol._close()


@implementer(IOfferReceiverDelegate)
class _OfferInProtocol(_OfferProtocol):
    """An offer subchannel the peer opened, and the OfferReceiver's
    application side (wired once, here)."""

    def __init__(self, session):
        self._session = session
        self.incoming = None
        self._done = OneShotObserver(session._eq)
        # the application's display (IncomingOffer.progress, .file_started)
        self._display = DisplayGuard("an incoming offer")
        self.machine = _receiving.OfferReceiver(session._run_hashing)
        self.machine.wire(_Channel(self), self)

    def accepted(self):
        self._watch("the sender's data")
        self.incoming._answer_sent()

    def file_started(self, path, size, offset):
        self._display(self.incoming.file_started, path, size, offset)

    def resumed(self, nbytes):
        self.incoming._resumed(nbytes)

    def ask(self, offer):
        self._unwatch()  # our application decides: no wait on the peer
        if (isinstance(offer, M.DirectoryOffer) and offer.folders
                and not self._session._empty_folders):
            # an attribute of a feature we did not declare: ignored, like
            # any unknown key (Dilated File Transfer, "Version Negotiation")
            offer = attr.evolve(offer, folders=())
        if not self._session._modes:  # the same: "file-modes" undeclared
            offer = attr.evolve(offer, **({"mode": None} if isinstance(offer, M.FileOffer)
                                          else {"folder_modes": ()}))
        self.incoming = IncomingOffer(offer, self.machine, self._done,
                                      self._session._free_space, self._session._resume,
                                      self._session._modes)
        self._session._incoming_offer(self.incoming)

    def progress(self, nbytes):
        self._display(self.incoming.progress, nbytes)

    def finished(self, result):
        self._unwatch()
        self._session._offers.discard(self)
        if self.incoming is not None:
            self.incoming._answer_sent()
        elif isinstance(result, Exception) and not self._ended_by_us:
            # the offer never became known (a record over the limits, a
            # malformed one, a protocol error, the peer's silence): no
            # IncomingOffer can say so, the session does
            self._session._offer_refused(OfferRefused(
                f"refused an offer from the peer before it was known: {result}"))
        self._done.fire(failure.Failure(result) if isinstance(result, Exception) else result)

    def connectionMade(self):
        self._session._offers.add(self)
        self._watch("the sender's offer")


@implementer(IOfferSenderDelegate)
class _OfferOutProtocol(_OfferProtocol):
    """An offer subchannel we opened, and the OfferSender's side (wired
    once, here)."""

    def __init__(self, session, outgoing, done, progress, file_started=None, resumed=None):
        self._session = session
        if not session._empty_folders:
            outgoing = _source.without_folders(outgoing)
        if not session._modes:
            outgoing = _source.without_modes(outgoing)
        self._outgoing = outgoing
        self._done = done
        # the application's display, called from the protocol: guarded
        display = DisplayGuard("an offer")
        self._progress = display.wrap(progress)
        self._file_started = file_started and display.wrap(file_started)
        self._resumed = resumed and display.wrap(resumed)
        self.machine = _sending.OfferSender(outgoing.offer, resumable=session._resume)
        self.machine.wire(_Channel(self), self)

    def check_resume(self, accept):
        return self._session._run_hashing(
            lambda cancelled: _source.resume_point(self._outgoing, accept, cancelled))

    def start_streaming(self, resume):
        # accepted: from now on the receiver must take our bytes (its flow
        # control lets each chunk go) and acknowledge them
        self._watch("the receiver to take or acknowledge the data")
        if self._resumed is not None and resume is not None and resume.held:
            self._resumed(resume.held)  # before any byte: a display counts them as done
        streamer = _source.Streamer(self._session._reactor, self._records()[1], self._outgoing,
                                    self.machine.file_sent, self.machine.all_sent,
                                    self.machine.source_failed, self._sent, resume,
                                    self._file_started)
        streamer.start()
        return streamer

    def _sent(self, nbytes):
        self._heard()
        self._progress(nbytes)

    def finished(self, result):
        self._unwatch()
        self._session._offers.discard(self)
        if isinstance(result, Exception):
            self._done.errback(failure.Failure(result))
        else:
            self._done.callback(result)

    def connectionMade(self):
        self._session._offers.add(self)
        self.machine.connected()


@implementer(ISessionDelegate)
class _SessionSide:
    """What the session machine makes happen: the TransferSession's glue
    (kept off its public surface)."""

    def __init__(self, session):
        self._s = session

    def start_dilation(self, negotiated):
        self._s._start_dilation(negotiated)

    def opened(self, negotiated):
        self._s._opened(negotiated)

    def start_failed(self, error):
        self._s._start_failed(error)

    def cancel_offers(self, reason):
        self._s._cancel_offers(reason)

    def close_control(self):
        self._s._close_control()

    def closed(self, reason):
        self._s._closed(reason)


class TransferSession:
    """A transfer-v2 session on wormhole ``w`` (created with
    ``dilation=True`` and ``versions=app_versions(mode)``).

    ``on_offer(IncomingOffer)`` decides about the peer's offers (without it
    every offer is rejected); ``on_text(str)`` gets the peer's text
    messages, ``on_totals(offers, nbytes)`` what the peer says it is about
    to offer (the "session-totals" feature; see ``announce_totals``).
    ``on_refused(OfferRefused)`` hears each offer of the peer's refused
    before it was known, so never handed to ``on_offer``: a record over
    the limits, a malformed record or offer (a directory offer whose
    entries repeat or collide, or over the limits), another protocol
    error, the peer's silence; without it they are logged. The display
    callbacks (``on_text``, ``on_totals``, an offer's ``progress`` and
    ``file_started``) are called through a guard: an exception they raise
    is logged once and never reaches the protocol.
    ``dilate_kwargs`` go to ``w.dilate()``. ``features`` must be
    what ``app_versions(mode, features)`` announced (default: all we have).
    ``peer_timeout`` (seconds): end the session when Dilation has had no
    connection to the peer for that long (it would otherwise reconnect
    forever to a peer that was killed); outstanding offers are cancelled
    (a resumable file keeps its bytes). ``inactivity_timeout`` (seconds):
    an offer gives up when the peer, connected or not, sends nothing it is
    waiting for that long (the offer, the data, the acknowledgements;
    not while a human decides); ``timeout_hint`` ends that message (the
    CLI names its option). ``run_hashing``: where the kept bytes of a
    resumed transfer are hashed (default: the reactor's thread pool; see
    ``_hashing``)."""

    def __init__(self, reactor, w, mode, on_offer=None, on_text=None,
                 dilate_kwargs=None, free_space=_landing.default_free_space,
                 features=None, peer_timeout=None, inactivity_timeout=None,
                 timeout_hint="", run_hashing=None, on_totals=None, on_refused=None):
        self._reactor = reactor
        # where the resume feature hashes kept bytes: a thread, not the reactor
        self._run_hashing = run_hashing or _hashing.in_thread(reactor)
        self._w = w
        self._eq = EventualQueue(reactor)
        self._on_offer = on_offer
        self._on_text = on_text or (lambda text: None)
        self._on_totals = on_totals or (lambda offers, nbytes: None)
        self._on_refused = on_refused or self._log_refused
        self._display = DisplayGuard("a transfer-v2 session")
        self._dilate_kwargs = dict(dilate_kwargs or {})
        self._peer_timeout = peer_timeout
        self._inactivity_timeout = inactivity_timeout
        self._timeout_hint = timeout_hint
        self._unreachable_timer = None
        if peer_timeout is not None:
            theirs = self._dilate_kwargs.get("status_update")
            self._dilate_kwargs["status_update"] = (
                lambda status: (self._dilation_status(status), theirs and theirs(status)))
        self._free_space = free_space
        self._offers = set()
        self._turn_end = []  # answers held for the reactor turn's end
        self._answering = []  # writers gathering the answers to a delivery now
        self._resume = False  # both declared the "resume" feature
        self._totals = False  # both declared "session-totals"
        self._empty_folders = False  # both declared "empty-folders"
        self._modes = False  # both declared "file-modes"
        self._framed = False  # both declared "framed-records"
        self._dilated = None
        self._our_control = None
        self.negotiated = None
        self._open = OneShotObserver(self._eq)
        self._closed_observer = OneShotObserver(self._eq)
        self._machine = _session.Session(mode, features)
        self._machine.wire(_SessionSide(self))

    # -- public ----------------------------------------------------------------
    def start(self):
        """Fires with this session once both control channels can be used,
        or fails: PeerUsesClassic (fall back), IncompatibleModes, or
        Dilation's OldPeerCannotDilateError."""
        self._w.get_versions().addCallbacks(self._machine.got_versions,
                                            self._versions_failed)
        return self._open.when_fired()

    def when_closed(self):
        """Fires (with a reason string) when the session is over, by either side."""
        return self._closed_observer.when_fired()

    def close(self):
        """End the session: outstanding offers are cancelled, our control
        channel closes; fires when it has (with ``inactivity_timeout``, at
        the latest that long after: a peer that stopped answering would
        hold it until Dilation's close timeout). Close the wormhole after
        this."""
        self._machine.close()
        seconds = self._inactivity_timeout
        closed = self.when_closed()
        if seconds is not None and not closed.called:
            bound = self._reactor.callLater(seconds, self._machine.peer_unreachable, seconds)
            closed.addBoth(lambda result: (bound.active() and bound.cancel(), result)[1])
        return closed

    def send_text(self, message):
        """Send a text ``message`` over the control subchannel; the session
        must be open (TransferError otherwise)."""
        if self._our_control is None:
            raise TransferError("the session is not open")
        self._our_control.transport.write(M.encode_control(M.Text(message)))

    @property
    def totals_agreed(self):
        """Both sides declared "session-totals": each says its totals
        (``announce_totals``) before its first offer."""
        return self._totals

    def announce_totals(self, offers, nbytes):
        """Tell the peer how many offers (and bytes) we are about to make
        ("session-totals" feature): True if it went, False when the peer
        did not declare the feature (nothing is sent)."""
        if self._our_control is None:
            raise TransferError("the session is not open")
        if not self._totals:
            return False
        self._our_control.transport.write(M.encode_control(M.SessionTotals(offers, nbytes)))
        return True

    def offer(self, path, progress=lambda nbytes: None, file_started=None, resumed=None):
        """Offer a file or a directory; fires with an OfferResult, or fails
        (OfferRejected, AcknowledgeMismatch, SourceChanged, OfferLost).
        ``progress(nbytes)`` counts the bytes sent; ``file_started(segments,
        size, offset)`` says when each file of a directory begins;
        ``resumed(held)``, before the first byte, how many bytes the
        receiver's resume keeps (not sent, not counted by ``progress``)."""
        if self.negotiated is None:
            return defer.fail(TransferError("the session is not open"))
        if not self.negotiated.we_may_offer:
            return defer.fail(TransferError(
                f"we may not offer in mode {self.negotiated.our_mode!r} to a peer in "
                f"mode {self.negotiated.their_mode!r}"))
        try:
            outgoing = _source.prepare(path)
        except TransferError:
            return defer.fail()
        return self.offer_prepared(outgoing, progress, file_started, resumed)

    def offer_prepared(self, outgoing, progress=lambda nbytes: None, file_started=None,
                       resumed=None):
        """Offer an ``Outgoing`` made by ``prepare_offer`` (to show it first)."""
        if outgoing.is_directory:
            why = _framing.refusal(M.encode_record(outgoing.offer), self._framed)
            if why is not None:
                return defer.fail(TransferError(f"cannot offer {outgoing.offer.base!r}: {why}"))
        done = defer.Deferred()
        factory = Factory.forProtocol(
            lambda: _OfferOutProtocol(self, outgoing, done, progress, file_started, resumed))
        d = self._dilated.connector_for(OFFER_SUBPROTOCOL).connect(factory)
        d.addErrback(lambda f: done.called or done.errback(f))
        return done

    # -- wiring ----------------------------------------------------------------
    def _versions_failed(self, f):
        self._machine.connect_failed(f.value)

    def _start_dilation(self, negotiated):
        self.negotiated = negotiated
        self._resume = _versions.RESUME in negotiated.features
        self._empty_folders = _versions.EMPTY_FOLDERS in negotiated.features
        self._totals = _versions.SESSION_TOTALS in negotiated.features
        self._framed = _versions.FRAMED_RECORDS in negotiated.features
        self._modes = _versions.FILE_MODES in negotiated.features
        self._dilated = self._w.dilate(**self._dilate_kwargs)
        control = Factory.forProtocol(lambda: _ControlProtocol(self, ours=False))
        offers = Factory.forProtocol(lambda: _OfferInProtocol(self))
        # listen() fails when Dilation does, as connect() below, whose
        # errback reports it: these two failures are the same one
        for name, factory in ((CONTROL_SUBPROTOCOL, control), (OFFER_SUBPROTOCOL, offers)):
            self._dilated.listener_for(name).listen(factory).addErrback(lambda f: None)
        ours = Factory.forProtocol(lambda: _ControlProtocol(self, ours=True))
        d = self._dilated.connector_for(CONTROL_SUBPROTOCOL).connect(ours)
        d.addCallbacks(self._our_control_made, self._our_control_failed)

    def _dilation_status(self, status):
        """Times how long Dilation has been without a connection to the peer."""
        if self._peer_timeout is None:  # the session is over
            return
        if isinstance(status.peer_connection, ConnectedPeer):
            if self._unreachable_timer is not None and self._unreachable_timer.active():
                self._unreachable_timer.cancel()
            self._unreachable_timer = None
        elif self._unreachable_timer is None:
            self._unreachable_timer = self._reactor.callLater(
                self._peer_timeout, self._machine.peer_unreachable, self._peer_timeout)

    def _stop_timer(self, result=None):
        if self._unreachable_timer is not None and self._unreachable_timer.active():
            self._unreachable_timer.cancel()
        return result

    def _our_control_made(self, protocol):
        self._our_control = protocol
        self._machine.control_connected()

    def _our_control_failed(self, f):
        self._machine.connect_failed(f.value)

    def _got_control(self, data):
        try:
            message = M.parse_control(data)
        except M.MessageError:
            return  # ignored: a later version's control message (docs/transfer-v2.md)
        if isinstance(message, M.SessionTotals):
            if self._totals:  # else a feature we did not agree on: ignored
                self._display(self._on_totals, message.offers, message.bytes)
            return
        self._display(self._on_text, message.message)

    def _control_lost(self, ours):
        if ours:
            self._machine.our_control_closed()
        else:
            self._machine.their_control_closed()

    def _incoming_offer(self, incoming):
        held = sum(isinstance(o, _OfferInProtocol) for o in self._offers)
        if held > MAX_INCOMING_OFFERS:
            incoming.reject(f"too many offers at once (at most {MAX_INCOMING_OFFERS})")
        elif not self.negotiated.they_may_offer:
            incoming.reject(f"a peer in mode {self.negotiated.their_mode!r} may not "
                            f"offer to a peer in mode {self.negotiated.our_mode!r}")
        elif self._on_offer is None:
            incoming.reject("this peer does not accept offers")
        else:
            self._on_offer(incoming)

    def _offer_refused(self, error):
        self._on_refused(error)

    @staticmethod
    def _log_refused(error):
        _log.info("{error}", error=error)

    def _opened(self, negotiated):
        self._open.fire_if_not_fired(self)

    def _start_failed(self, error):
        self._open.fire_if_not_fired(failure.Failure(error))

    def _cancel_offers(self, reason):
        for offer in list(self._offers):
            offer.session_over(reason)

    def _at_turn_end(self, delay, write_held):
        """``callLater(0, write_held)`` for the answers offer subchannels
        hold to the end of the turn (``_framing.answers``), run together,
        and at once when our control closes (``_close_control``)."""
        self._turn_end.append(write_held)
        if len(self._turn_end) == 1:
            self._reactor.callLater(delay, self._end_turn)

    def _end_turn(self):
        pending, self._turn_end = self._turn_end, []
        for write_held in pending:
            write_held()

    def _close_control(self):
        # what we answered this turn (a refusal, acknowledgements) goes
        # before our control's close: the peer takes that close for the
        # end of every offer still open, and one we refused would read
        # "the peer ended the session" instead of our refusal. Also what
        # a delivery being handled gathered so far: a close decided while
        # it is handled (our refusal of the offer it brought ended the
        # session) comes before its answers are handed to _at_turn_end.
        self._end_turn()
        for writer in self._answering:
            _framing.write_held(writer)
        self._our_control.transport.loseConnection()

    def _closed(self, reason):
        self._peer_timeout = None
        self._stop_timer()
        self._closed_observer.fire_if_not_fired(reason)
