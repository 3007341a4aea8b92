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
from twisted.internet import defer
from twisted.internet.protocol import Factory
from twisted.python import failure
from zope.interface import implementer

from .. import _landing
from .._eventual import EventualQueue
from .._guarded import DisplayGuard
from .._observer import OneShotObserver
from ..errors import TransferError
from . import _framing, _hashing, _session, _shells, _source, _stream_source
from . import _messages as M
from ._interfaces import ISessionDelegate
from ._offers import Offers
from ._peer_watch import PeerWatch
from ._turns import TurnEnd

# why a stream cannot go to a peer that did not declare the "stream"
# feature: never a made-up size (docs/transfer-v2.md "Streams")
STREAM_REFUSED = ('the receiver\'s transfer-v2 lacks the "stream" feature: it cannot take '
                  'a stream of unknown length (nothing was sent)')


class StreamRefused(TransferError):
    """A stream offered to a peer without the "stream" feature: refused
    before anything is sent."""


# the spec's "control subchannel #0" and offer subchannels, as Dilation
# subprotocol names (docs/transfer-v2.md "Subchannels")
CONTROL_SUBPROTOCOL = "transfer-v2-control"
OFFER_SUBPROTOCOL = "transfer-v2-offer"


@implementer(ISessionDelegate)
class _SessionSide:
    """What the session machine makes happen, as the TransferSession hands
    it over at wiring (kept off its public surface)."""

    def __init__(self, start_dilation, opened, start_failed, cancel_offers, close_control,
                 closed):
        self.start_dilation = start_dilation
        self.opened = opened
        self.start_failed = start_failed
        self.cancel_offers = cancel_offers
        self.close_control = close_control
        self.closed = closed


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
        self._on_text = on_text or (lambda text: None)
        self._on_totals = on_totals or (lambda offers, nbytes: None)
        self._display = DisplayGuard("a transfer-v2 session")
        self._dilate_kwargs = dict(dilate_kwargs or {})
        self._inactivity_timeout = inactivity_timeout
        self._timeout_hint = timeout_hint
        self._peer_watch = None
        if peer_timeout is not None:
            self._peer_watch = PeerWatch(reactor, peer_timeout,
                                         lambda seconds: self._machine.peer_unreachable(seconds))
            theirs = self._dilate_kwargs.get("status_update")
            self._dilate_kwargs["status_update"] = (
                lambda status: (self._peer_watch.status(status), theirs and theirs(status)))
        self._free_space = free_space
        self._offers = Offers(on_offer, on_refused)
        self._turns = TurnEnd(reactor.callLater)
        self._context = None  # the offers' OfferContext, once negotiated
        self._dilated = None
        self._our_control = None
        self.negotiated = None
        self._open = OneShotObserver(self._eq)
        self._versions_asked = None  # start()'s get_versions(): asked once
        self._closed_observer = OneShotObserver(self._eq)
        self._machine = _session.Session(mode, features)
        self._machine.wire(self._session_side())

    # -- public ----------------------------------------------------------------
    def start(self):
        """Fires with this session once both control channels can be used,
        or fails: PeerUsesClassic (fall back), IncompatibleModes, or
        Dilation's OldPeerCannotDilateError. A session starts once: a
        second call raises TransferError (the peer's versions come once,
        and the machine has nowhere to take them again)."""
        if self._versions_asked is not None:
            raise TransferError("this transfer session was started already: "
                                "start() is called once")
        self._versions_asked = self._w.get_versions()
        self._versions_asked.addCallbacks(self._machine.got_versions, self._versions_failed)
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
        return self.negotiated is not None and self.negotiated.session_totals

    def announce_totals(self, offers, nbytes):
        """Tell the peer how many offers (and bytes) we are about to make
        ("session-totals" feature): True if it went, False when the peer
        did not declare the feature (nothing is sent)."""
        if self._our_control is None:
            raise TransferError("the session is not open")
        if not self.negotiated.session_totals:
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
        why = self._cannot_offer()
        if why is not None:
            return defer.fail(why)
        try:
            outgoing = _source.prepare(path)
        except TransferError:
            return defer.fail()
        return self.offer_prepared(outgoing, progress, file_started, resumed)

    def offer_stream(self, source, name="stream", progress=lambda nbytes: None, text=False):
        """Offer a stream (the "stream" feature, docs/transfer-v2.md
        "Streams"): bytes of a length nobody knows yet, from ``source``, a
        file-like object (``read``) or a callable ``start(consumer)`` that
        makes a producer (push or pull) write to ``consumer`` and end
        with ``consumer.finish()`` (or ``consumer.fail(reason)``: the
        receiver hears why). Fires with an OfferResult (one file, the
        stream's length, both ends' hashes matched) or fails:
        StreamRefused at once when the peer did not declare the feature
        (nothing is sent), OfferRejected (its ``reason`` starts with
        ``STOPPED_READING`` when the receiver's consumer stopped),
        StreamInputFailed, OfferLost. ``text``: the bytes are a text
        message (UTF-8), for the receiver to show as one."""
        why = self._cannot_offer()
        if why is None and not self.negotiated.stream:
            why = StreamRefused(STREAM_REFUSED)
        if why is not None:
            return defer.fail(why)
        try:
            outgoing = _stream_source.prepare_stream(source, name, text)
        except (TypeError, M.MessageError) as e:
            return defer.fail(TransferError(str(e)))
        return self._offer_outgoing(outgoing, progress)

    def _cannot_offer(self):
        if self.negotiated is None:
            return TransferError("the session is not open")
        if not self.negotiated.we_may_offer:
            return TransferError(
                f"we may not offer in mode {self.negotiated.our_mode!r} to a peer in "
                f"mode {self.negotiated.their_mode!r}")
        return None

    def offer_prepared(self, outgoing, progress=lambda nbytes: None, file_started=None,
                       resumed=None):
        """Offer an ``Outgoing`` made by ``prepare_offer`` (to show it first)."""
        if outgoing.is_directory:
            why = _framing.refusal(M.encode_record(outgoing.offer),
                                   self.negotiated.framed_records)
            if why is not None:
                return defer.fail(TransferError(f"cannot offer {outgoing.offer.base!r}: {why}"))
        return self._offer_outgoing(outgoing, progress, file_started, resumed)

    def _offer_outgoing(self, outgoing, progress, file_started=None, resumed=None):
        done = defer.Deferred()
        factory = Factory.forProtocol(
            lambda: self._offer_out(outgoing, done, progress, file_started, resumed))
        d = self._dilated.connector_for(OFFER_SUBPROTOCOL).connect(factory)
        d.addErrback(lambda f: done.called or done.errback(f))
        return done

    # -- wiring ----------------------------------------------------------------
    def _versions_failed(self, f):
        self._machine.connect_failed(f.value)

    def _session_side(self):
        return _SessionSide(self._start_dilation, self._opened, self._start_failed,
                            self._offers.cancel_all, self._close_control, self._closed)

    def _agree(self, negotiated):
        """What both declared is known: the offers' context follows from it."""
        self.negotiated = negotiated
        self._context = _shells.OfferContext(
            self._reactor, negotiated, self._eq, self._run_hashing, self._free_space,
            self._turns, self._offers, self._inactivity_timeout, self._timeout_hint)

    def _offer_in(self):
        return _shells.OfferInProtocol(self._context)

    def _offer_out(self, outgoing, done, progress, file_started=None, resumed=None):
        return _shells.OfferOutProtocol(self._context, outgoing, done, progress,
                                        file_started, resumed)

    def _start_dilation(self, negotiated):
        self._agree(negotiated)
        self._dilated = self._w.dilate(**self._dilate_kwargs)
        control = Factory.forProtocol(
            lambda: _shells.ControlProtocol(self._got_control, self._machine.their_control_closed))
        offers = Factory.forProtocol(self._offer_in)
        # listen() fails when Dilation does, as connect() below, whose
        # errback reports it: these two failures are the same one
        for name, factory in ((CONTROL_SUBPROTOCOL, control), (OFFER_SUBPROTOCOL, offers)):
            self._dilated.listener_for(name).listen(factory).addErrback(lambda f: None)
        ours = Factory.forProtocol(
            lambda: _shells.ControlProtocol(lambda data: None, self._machine.our_control_closed))
        d = self._dilated.connector_for(CONTROL_SUBPROTOCOL).connect(ours)
        d.addCallbacks(self._our_control_made, self._our_control_failed)

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
            if self.negotiated.session_totals:  # else a feature we did not agree on: ignored
                self._display(self._on_totals, message.offers, message.bytes)
            return
        self._display(self._on_text, message.message)

    def _control_lost(self, ours):
        if ours:
            self._machine.our_control_closed()
        else:
            self._machine.their_control_closed()

    def _opened(self, negotiated):
        self._open.fire_if_not_fired(self)

    def _start_failed(self, error):
        self._open.fire_if_not_fired(failure.Failure(error))

    def _close_control(self):
        # what we answered this turn (a refusal, acknowledgements) goes
        # before our control's close: the peer takes that close for the
        # end of every offer still open, and one we refused would read
        # "the peer ended the session" instead of our refusal. Also what
        # a delivery being handled gathered so far: a close decided while
        # it is handled (our refusal of the offer it brought ended the
        # session) comes before its answers are handed to the turn's end.
        self._turns.flush()
        self._our_control.transport.loseConnection()

    def _closed(self, reason):
        if self._peer_watch is not None:
            self._peer_watch.stop()
        self._closed_observer.fire_if_not_fired(reason)
