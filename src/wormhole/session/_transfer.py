"""One transfer with any peer, as a library (docs/api.md "Sessions"):
``Transfer`` sends texts, files and directories, or receives them, over a
wormhole the application made with ``wormhole_options(mode)``. It picks
transfer-v2 or the classic protocol from the peer's versions (and falls
back when a transfer-v2 peer cannot dilate), fails in seconds naming the
leg when no path can work (``FirstConnection``), ends at once on the
peer's ``error`` message (``PeerError``), refuses an offer whose target
exists before its policy is asked, resumes what an interrupted receive
kept, and tells one ``ITransferObserver`` everything as typed events
(``_events``)."""
import os
import time

from twisted.internet import defer
from zope.interface import implementer

from .. import _landing, transfer
from .. import transfer_v2 as T
from .._dilation.manager import OldPeerCannotDilateError
from .._eventual import EventualQueue
from .._guarded import DisplayGuard
from .._observer import OneShotObserver
from ..errors import NoPath, TransferError, WrongPasswordError
from ..transit import TransitReceiver, TransitSender
from . import _events as E
from ._interfaces import IReceivePolicy, IStreamPolicy, ITransferObserver
from ._kept import expire, kept_for
from ._outcome import lost, rejected
from ._path import PeerPath
from ._peer_error import PeerError
from ._reach import FirstConnection
from ._receive_flow import ReceiveFlow

# how long a transfer-v2 session survives without any connection to the
# peer (a peer that was killed never closes; Dilation would retry forever)
PEER_TIMEOUT = 60.0
V2, CLASSIC = "transfer-v2", "classic"
# a stream needs transfer-v2's "stream" feature: the classic protocol
# sends a size before the first byte (docs/transfer-v2.md "Streams")
STREAM_NEEDS_V2 = ("the receiver speaks only the classic protocol, which needs a size "
                   "before the first byte: it cannot take a stream (nothing was sent)")
NO_STREAMS_HERE = "this receiver takes no streams"


def wormhole_options(mode):
    """``wormhole.create(..., **wormhole_options(mode))`` for a Transfer:
    ``mode`` "send" or "receive"."""
    return {"versions": T.app_versions(mode), "dilation": True}


@implementer(IReceivePolicy)
class AcceptAll:
    """The default policy: every offer that passed the receiving rules."""

    def decide(self, offer):
        return True


class RulesRefused(transfer.Declined):
    """Our receiving rules refused the peer's offer (it would overwrite,
    there is no room): declined (the CLI's exit 3), ``Failed`` kind
    "refused"."""


def failure_event(error, peer_error=None):
    """The ``Failed`` event for an exception a transfer ended with."""
    if isinstance(error, WrongPasswordError):
        return E.Failed("wrong-code", str(error))
    if isinstance(error, NoPath):
        return E.Failed("no-path", str(error), error.leg)
    if peer_error is not None and error is peer_error:
        return E.Failed("peer-error", str(error))
    if isinstance(error, T.OfferRejected):
        return E.Failed("declined", str(error))
    if isinstance(error, (_landing.Refused, RulesRefused)):
        return E.Failed("refused", str(error))
    if isinstance(error, transfer.Declined):
        return E.Failed("declined", str(error))
    return E.Failed("error", str(error))


class Transfer:
    """A whole transfer over ``w`` (created with ``wormhole_options``;
    ``appid``: the one it was created with). ``observer``: an
    ``ITransferObserver``; ``policy``: an ``IReceivePolicy`` (default:
    accept what the rules let through); ``folder``: where received files
    go. ``transit_helper``: our Transit relay (e.g. "tcp:HOST:PORT");
    ``listen``: whether we take direct connections; ``peer_timeout``: how
    long a transfer-v2 session lives without any connection to the peer.
    ``dilate_kwargs``: more for ``w.dilate()``. ``output``: another name
    for the first file or directory received (relative to ``folder``), or
    a folder every one goes into (the CLI's ``-o``). ``classic``: use the
    classic protocol whatever the peer announces (made without
    ``wormhole_options``: the CLI's ``--classic``). ``offer_timeout``:
    seconds a receiving session waits for the sender's next offer while
    none is under way, then ends (None: no bound); ``inactivity_timeout``:
    an offer gives up when the peer sends or takes nothing it waits for
    that long (None: no bound); ``timeout_hint`` ends both messages (the
    CLI names its option)."""

    def __init__(self, reactor, w, appid, observer, policy=None, folder=".",
                 transit_helper=None, listen=True, peer_timeout=PEER_TIMEOUT,
                 dilate_kwargs=None, free_space=_landing.default_free_space,
                 output=None, classic=False, offer_timeout=None, inactivity_timeout=None,
                 timeout_hint=""):
        self._reactor = reactor
        self._w = w
        self._appid = appid
        self._observer = ITransferObserver(observer)
        self._policy = IReceivePolicy(policy) if policy is not None else AcceptAll()
        self._folder = os.path.abspath(folder)
        self._transit_helper = transit_helper
        self._listen = listen
        self._peer_timeout = peer_timeout
        self._dilate_kwargs = dict(dilate_kwargs or {})
        self._free_space = free_space
        self._output = output
        self._classic = classic
        self._inactivity_timeout = inactivity_timeout
        self._timeout_hint = timeout_hint
        self._flow = ReceiveFlow(reactor, offer_timeout, timeout_hint)
        self._offers_seen = 0
        self._guard = DisplayGuard("a transfer's observer")
        self._peer = None  # the PeerError of a transfer-v2 session
        self._arrivals = []  # (Deferred of an offer's end) of the peer's offers
        self._refusals = []  # what our rules refused
        self._declined = []  # names the policy declined

    # -- public ----------------------------------------------------------------
    def receive(self):
        """Fires with the list of ``Received`` (and ``TextReceived``)
        events once the sender is done, or fails (the ``Failed`` event
        said why)."""
        return self._run(self._receive)

    def send(self, paths=(), text=None, stream=None, stream_name="stream"):
        """Offer ``text`` and/or each of ``paths`` (files, directories),
        then ``stream`` (the "stream" feature: a file-like object, or
        ``start(consumer)`` making a producer write to it, as
        ``TransferSession.offer_stream``) named ``stream_name``; fires
        with the list of ``Sent`` events, or fails. The classic protocol
        takes one text or one path, and no stream (``StreamRefused``
        before anything is sent, as for a transfer-v2 peer without the
        feature)."""
        return self._run(self._send, list(paths), text, stream, stream_name)

    # -- common ----------------------------------------------------------------
    def _emit(self, event):
        self._guard(self._observer.event, event)

    @defer.inlineCallbacks
    def _run(self, how, *args):
        try:
            result = yield how(*args)
        except Exception as e:
            self._emit(failure_event(e, self._peer and self._peer.error))
            raise
        self._emit(E.Finished())
        return result

    def _session(self, mode, first, **kw):
        path = PeerPath(lambda via, again: self._emit(E.Connected(via, again)))
        theirs = self._dilate_kwargs.get("status_update")

        def status_update(status):
            first.status_update(status)
            path.status_update(status)
            if theirs is not None:
                theirs(status)
        kw.setdefault("on_totals", lambda offers, size: self._emit(E.Totals(offers, size)))
        kwargs = dict(self._dilate_kwargs, no_listen=not self._listen,
                      status_update=status_update)
        if self._transit_helper:
            kwargs["transit_relay_location"] = self._transit_helper
        return T.TransferSession(self._reactor, self._w, mode, dilate_kwargs=kwargs,
                                 peer_timeout=self._peer_timeout, free_space=self._free_space,
                                 inactivity_timeout=self._inactivity_timeout,
                                 timeout_hint=self._timeout_hint,
                                 on_text=lambda text: self._emit(E.TextReceived(text)), **kw)

    @defer.inlineCallbacks
    def _opened(self, session):
        """``session`` open (True), or False when the peer cannot dilate;
        a session with no path to the peer fails naming the leg."""
        first = self._first
        first.watch(session)
        try:
            yield session.start()
        except OldPeerCannotDilateError:
            return False
        except Exception as e:
            raise first.explain(e) from None
        finally:
            first.stop()
        return True

    def _first_connection(self):
        self._first = FirstConnection(self._reactor, listen=self._listen,
                                      transit_helper=self._transit_helper)
        return self._first

    def _transit(self, kind):
        """The classic protocol's Transit side (made once the offer is
        accepted): our relay, direct connections unless ``listen`` is off."""
        return lambda: kind(self._transit_helper, no_listen=not self._listen,
                            reactor=self._reactor)

    # -- receiving -------------------------------------------------------------
    @defer.inlineCallbacks
    def _speaks_v2(self):
        """Whether transfer-v2 is used (else ProtocolChosen said why not)."""
        if self._classic:
            self._emit(E.ProtocolChosen(CLASSIC, "asked for"))
            return False
        versions = yield self._w.get_versions()
        if not T.speaks_transfer_v2(versions):
            self._emit(E.ProtocolChosen(CLASSIC, "the peer announced no transfer-v2"))
            return False
        return True

    @defer.inlineCallbacks
    def _receive(self):
        if not (yield self._speaks_v2()):
            return (yield self._receive_classic(None))
        session = self._session("receive", self._first_connection(), on_offer=self._offered,
                                on_refused=self._refused_unknown)
        # the sender's first mailbox message: its error ends the session;
        # if we fall back to classic, it is the classic receiver's
        self._peer = PeerError(session, "sender")
        message = OneShotObserver(EventualQueue(self._reactor))
        self._w.get_message().addCallbacks(
            lambda body: message.fire(self._peer.got(body)), message.error)
        try:
            opened = yield self._opened(session)
        except Exception:
            if self._peer.error is not None:
                raise self._peer.error from None
            raise
        if not opened:
            self._peer.hand_over()
            self._emit(E.ProtocolChosen(CLASSIC, "the peer cannot dilate"))
            return (yield self._receive_classic(message.when_fired()))
        self._emit(E.ProtocolChosen(V2))
        # the bound on what interrupted receives keep, here as in the CLI
        expire(self._folder, time.time())
        # a sender that offers nothing more while keeping the session up
        # is not waited for beyond offer_timeout (docs/security.md,
        # "Timeouts on the receive side")
        self._flow.expect_offers(session)
        try:
            yield self._peer.unless_error(session.when_closed())
        finally:
            self._flow.session_over()
        results = yield defer.gatherResults(self._arrivals, consumeErrors=True).addErrback(
            lambda f: f.value.subFailure)
        silence = self._flow.silence_error()
        if self._refusals:
            raise self._refused(self._refusals[0])
        if silence is not None:
            raise silence
        received = [r for r in results if r is not None]
        if self._declined and not received:
            # nothing arrived because we said no: not a success
            raise transfer.Declined(f"declined {self._declined[0]!r}")
        return received

    def _offered(self, incoming):
        # under way from now on, streams too: no silence bound meanwhile
        self._flow.offer_came(incoming)
        # (its result is the arrival's, below: consumed here)
        incoming.when_done().addBoth(lambda _: self._flow.offer_over(incoming))
        if incoming.is_stream:
            return self._stream_offered(incoming)
        offer = incoming.offer
        kind = "directory" if incoming.is_directory else "file"
        name = offer.base if incoming.is_directory else offer.filename
        self._offers_seen += 1
        # -o names the first offer only, unless it is a folder
        output = self._output
        if output and self._offers_seen > 1 and not os.path.isdir(
                os.path.join(self._folder, output)):
            output = None
        try:
            target = _landing.target_path(self._folder, name, output)
            # the receiving rules before the policy: nothing existing is
            # replaced, and the sender hears why (docs/security.md,
            # "Receiving files and directories")
            _landing.check_not_existing(target, name)
        except _landing.Refused as e:
            self._refuse(incoming, name, e)
            return
        kept = kept_for(target)
        self._ask(incoming, E.OfferArrived(kind, name, incoming.size, target,
                                           kept.nbytes if kept else 0))

    def _ask(self, incoming, arrived):
        """The policy decides about ``arrived`` (the observer hears it first)."""
        self._emit(arrived)
        ended = defer.Deferred()
        self._arrivals.append(ended)
        decided = defer.maybeDeferred(self._policy.decide, arrived)
        decided.addCallback(self._decided, incoming, arrived, ended)
        decided.addErrback(lambda f: (incoming.reject(f"the receiver failed: "
                                                      f"{f.getErrorMessage()}"),
                                      ended.errback(f)))

    @defer.inlineCallbacks
    def _offer_v2(self, session, path, outgoing):
        """One offer of ours: fires with its Sent event, or fails worded
        as the CLI words it (``rejected``, ``lost``)."""
        name = os.path.basename(os.path.abspath(path))
        done = [0]  # bytes the receiver holds: kept from before, then sent

        def progress(nbytes):
            done[0] += nbytes
            self._emit(E.Progress(name, done[0], outgoing.size))

        def resumed(held):
            done[0] += held
        try:
            result = yield self._peer.unless_error(session.offer_prepared(
                outgoing, progress=progress, file_started=self._file_started(name),
                resumed=resumed))
        except T.OfferRejected as e:
            raise rejected(e.reason) from None
        except Exception as e:
            if e is self._peer.error:
                raise
            raise self._lost("receiver", e, done[0], 0, outgoing.size) from None
        event = E.Sent(name, result.bytes, result.resumed_from)
        self._emit(event)
        return event

    def _file_started(self, name):
        """An offer's ``file_started`` callback: FileStarted events."""
        return lambda segments, size, offset: self._emit(
            E.FileStarted(name, "/".join(segments), size, offset))

    @staticmethod
    def _lost(who, error, moved, held, size):
        """An offer's failure, saying how far it got once bytes moved
        (as the CLI says it)."""
        if not moved or size is None:
            return error  # nothing moved yet, or a stream: its error says how far
        return lost(who, error, held + moved, size)

    @staticmethod
    def _refused(error):
        """What a refusal by our rules ends the transfer with: declined
        (exit 3, as the CLI's) when it would overwrite or there is no room,
        the failure itself when the offer was malformed (an unusable
        name) or refused before it was known."""
        if isinstance(error, _landing.Refused) and not isinstance(error, _landing.BadOffer):
            return RulesRefused(str(error))
        return error

    def _refused_unknown(self, error):
        """An offer the library refused before it was known (over the
        limits, malformed, a protocol error): a failure of the transfer,
        said as a refusal by the protocol with no name."""
        self._refusals.append(error)
        self._emit(E.OfferRefused("", str(error), "protocol"))

    def _stream_offered(self, incoming):
        name = incoming.offer.filename
        if not IStreamPolicy.providedBy(self._policy):
            self._refuse(incoming, name, TransferError(
                f"{NO_STREAMS_HERE} (its policy takes none)"))
            return
        self._ask(incoming, E.OfferArrived("stream", name, None, None))

    def _refuse(self, incoming, name, error):
        self._refusals.append(error)
        self._emit(E.OfferRefused(name, str(error), "rules"))
        incoming.reject(str(error))

    def _decided(self, yes, incoming, arrived, ended):
        if not yes:
            self._declined.append(arrived.name)
            self._emit(E.OfferRefused(arrived.name, transfer.TRANSFER_REJECTED, "policy"))
            incoming.reject(transfer.TRANSFER_REJECTED)
            ended.callback(None)
            return
        done = [0]

        def progress(nbytes):
            done[0] += nbytes
            self._emit(E.Progress(arrived.name, incoming.held + done[0], arrived.size))
        incoming.progress = progress
        incoming.file_started = lambda segments, size, offset: self._emit(
            E.FileStarted(arrived.name, "/".join(segments), size, offset))

        def answered(incoming):
            if incoming.refused is not None:
                self._refuse_late(arrived.name, incoming.refusal)
            else:
                self._emit(E.OfferAccepted(arrived.name, arrived.target, incoming.resumed_from))
        if incoming.is_stream:
            # (held is 0, size None: a stream is never resumed)
            answering = incoming.accept_stream(self._policy.consumer_for(arrived))
        else:
            answering = incoming.accept(os.path.dirname(arrived.target),
                                        os.path.basename(arrived.target))
        answering.addCallback(answered)
        incoming.when_done().addCallbacks(
            lambda result: ended.callback(self._arrived(arrived, result)),
            lambda f: ended.errback(self._lost("sender", f.value, done[0], incoming.held,
                                               arrived.size)))

    def _refuse_late(self, name, error):
        self._refusals.append(error)
        self._emit(E.OfferRefused(name, str(error), "rules"))

    def _arrived(self, arrived, result):
        if not isinstance(result, T.Received):
            return None  # refused: said already
        event = E.Received(arrived.name, result.path, result.bytes)
        self._emit(event)
        return event

    @defer.inlineCallbacks
    def _receive_classic(self, first_message):
        def accept(offer):
            arrived = E.OfferArrived(offer.kind, offer.name, offer.size, offer.target)
            self._emit(arrived)
            return self._policy.decide(arrived)
        policy = transfer.ReceivePolicy(folder=self._folder, output=self._output,
                                        accept=accept, free_space=self._free_space)
        received = yield transfer.receive(self._reactor, self._w, self._appid, policy,
                                          transit=self._transit(TransitReceiver),
                                          first_message=first_message)
        if received.kind == "text":
            event = E.TextReceived(received.text)
        else:
            event = E.Received(os.path.basename(received.path), received.path, received.size)
        self._emit(event)
        return [event]

    # -- sending ---------------------------------------------------------------
    @defer.inlineCallbacks
    def _send(self, paths, text, stream=None, stream_name="stream"):
        if not paths and text is None and stream is None:
            raise TransferError("nothing to send")
        if (yield self._speaks_v2()):
            session = self._session("send", self._first_connection())
            if (yield self._opened(session)):
                self._emit(E.ProtocolChosen(V2))
                return (yield self._send_v2(session, paths, text, stream, stream_name))
            self._emit(E.ProtocolChosen(CLASSIC, "the peer cannot dilate"))
        if stream is not None:
            raise T.StreamRefused(STREAM_NEEDS_V2)
        return (yield self._send_classic(paths, text))

    @defer.inlineCallbacks
    def _send_v2(self, session, paths, text, stream=None, stream_name="stream"):
        self._peer = PeerError.watching(self._w, session, "receiver")
        sent = []
        try:
            # every path checked before anything is offered, and the
            # totals said first (the "session-totals" feature: the
            # receiver shows a whole-session bar)
            outgoings = [T.prepare_offer(path) for path in paths]
            session.announce_totals(len(outgoings), sum(o.size for o in outgoings))
            if text is not None:
                session.send_text(text)
            for path, outgoing in zip(paths, outgoings, strict=True):
                sent.append((yield self._offer_v2(session, path, outgoing)))
            if stream is not None:
                done = [0]

                def streamed(nbytes):
                    done[0] += nbytes
                    self._emit(E.Progress(stream_name, done[0], None))
                result = yield self._peer.unless_error(
                    session.offer_stream(stream, stream_name, progress=streamed))
                sent.append(E.Sent(stream_name, result.bytes))
                self._emit(sent[-1])
        finally:
            yield self._peer.unless_error(session.close()).addErrback(lambda f: None)
        if self._peer.error is not None:
            raise self._peer.error
        return sent

    @defer.inlineCallbacks
    def _send_classic(self, paths, text):
        if len(paths) + (text is not None) != 1:
            raise TransferError("the classic protocol sends one text or one path")
        if text is not None:
            yield transfer.send_text(self._w, text)
            return []
        name = os.path.basename(os.path.abspath(paths[0]))
        result = yield transfer.send_file(self._reactor, self._w, self._appid, paths[0],
                                          transit=self._transit(TransitSender))
        event = E.Sent(name, result.size)
        self._emit(event)
        return [event]
