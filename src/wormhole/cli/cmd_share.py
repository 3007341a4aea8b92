"""``wormhole share [PATH]...``: a transfer-v2 session in ``connect``
mode (docs/transfer-v2.md "wormhole share [PATH]..."): both sides offer their PATHs
and receive the other's, until one of them ends the session.

The first side allocates a code (or takes ``--code``), the second joins
with ``--code``. Each side offers its paths in turn and asks about each
incoming offer (``--accept-file`` accepts all); a path typed while no
question waits is offered next. The session ends when this side's own
offers are done *and* its human ends it (end of input: Ctrl-D), or when
the peer ends it. transfer-v2 only: a peer without it is
told to use ``wormhole send``/``receive``.
"""
from twisted.internet import defer

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import (
    NO_DILATION,
    NOT_V2,
    OldPeerCannotDilateError,
    PeerError,
    PeerTimeout,
    escape_text,
    give_up_after,
    outcome,
)
from ..transfer import VERIFICATION_REJECTED, Declined
from ..util import dict_to_bytes
from ._common import make_wormhole, run_and_close
from ._receiving import Receiving
from ._send_paths import offer_all, prepare_all
from ._v2_session import (
    check_transit_helper,
    first_connection,
    opened,
    peer_speaks_v2,
    receiving_session,
    wormhole_kwargs,
)
from .ui.connection_path import ConnectionPath
from .ui.progress import PEER_TIMEOUT_HINT
from .ui.prompt import Lines
from .ui.screen import end_questions, say
from .ui.wording import V2_USED, peer_says


class _Offering:
    """Our offers, one after the other: the paths given, then each path
    the human types while no question waits (offered once the session is
    open). ``failures``: the errors of those that did not complete."""

    def __init__(self, reactor, cfg, outgoings):
        self._reactor = reactor
        self._cfg = cfg
        self._chain = defer.Deferred()  # fires once the session is open
        self._session = self._path = None
        self._refusal = None  # why we may not offer at all
        self.failures = []
        self.offered = 0
        self.then(outgoings)

    def start(self, session, path):
        """The session is open (``path``: its ConnectionPath): offer."""
        self._session, self._path = session, path
        self._chain.callback(None)

    def refuse(self, error):
        """We may not offer (the peer only sends): the given offers failed."""
        self._refusal = error
        if self.offered:
            self.failures.append(error)
        self._chain = defer.succeed(None)

    def then(self, outgoings):
        self.offered += len(outgoings)
        self._chain.addCallback(lambda _: offer_all(self._reactor, self._cfg, self._session,
                                                    outgoings, self._path))
        self._chain.addCallback(self.failures.extend)

    def typed(self, line):
        """A line typed while no question waited: a path to offer."""
        path = line.strip()
        if not path:
            return
        if self._refusal is not None:
            say(self._cfg, f"Not offered: {escape_text(self._refusal)}")
            return
        try:
            outgoings = prepare_all(self._cfg, paths=[path])
        except TransferError as e:
            say(self._cfg, f"Not offered: {escape_text(e)}")
            return
        say(self._cfg, f"Will offer {escape_text(path)} next")
        self.then(outgoings)

    def done(self):
        """Fires once every offer made so far is over."""
        d = defer.Deferred()
        self._chain.addBoth(lambda result: (d.callback(None), result)[1])
        return d


@defer.inlineCallbacks
def _announce(cfg, w):
    if cfg.zeromode:
        w.set_code("0-")
        yield w.get_code()
        return
    if cfg.code:
        w.set_code(cfg.code)
        code = yield w.get_code()
        return
    w.allocate_code(cfg.code_length)
    code = yield w.get_code()
    print(f"Wormhole code is: {code}\nOn the other computer, please run:\n\n"
          f"wormhole share --code {code} [PATH]...\n", file=cfg.stderr, flush=True)


@defer.inlineCallbacks
def _verified_or_declined(reactor, cfg, w, lines):
    """With --verify, the human's word on the verifier (a line of the
    session's input); a no tells the peer and ends as declined (exit 3)."""
    if not cfg.verify:
        return
    verifier = yield w.get_verifier()
    try:
        answer = yield lines.ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
    except EOFError:
        answer = "no"
    if answer.strip().lower() not in ("yes", "y"):
        w.send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))
        raise Declined(VERIFICATION_REJECTED)


@defer.inlineCallbacks
def share(reactor, cfg):
    outgoings = prepare_all(cfg) if cfg.paths else []
    check_transit_helper(cfg)
    w = make_wormhole(reactor, cfg, "share", **wormhole_kwargs(cfg, "connect"))

    @defer.inlineCallbacks
    def body():
        yield _announce(cfg, w)
        versions = yield w.get_versions()
        if not peer_speaks_v2(versions):
            w.send_message(dict_to_bytes({"error": NOT_V2}))
            raise TransferError(NOT_V2)
        offering = _Offering(reactor, cfg, outgoings)
        lines = Lines(reactor, cfg, offering.typed)
        yield _verified_or_declined(reactor, cfg, w, lines)
        path = ConnectionPath(cfg)
        first = first_connection(reactor, cfg)
        receiving = Receiving(reactor, cfg, lines.ask, path)
        session = receiving_session(reactor, cfg, w, "connect", receiving, peer_says(cfg), path,
                                    first)
        try:
            yield opened(session, first)
        except OldPeerCannotDilateError:
            # it announced transfer-v2 but has no Dilation version we share
            w.send_message(dict_to_bytes({"error": NO_DILATION}))
            raise TransferError(NO_DILATION) from None
        print(f"{V2_USED} Both sides may offer; type a path to offer it; end of input "
              "(Ctrl-D) ends the session once our offers are done.", file=cfg.stderr,
              flush=True)
        receiving.expire_kept()
        # a peer that stops on purpose says so in the mailbox: not waited for
        peer = PeerError.watching(w, session, "peer")
        # the totals, 0 when we offer nothing: a peer that ends the session
        # waits for them and for the offers they announce (session-totals
        # feature; Receiving.answered)
        if not outgoings:
            session.announce_totals(0, 0)
        if not session.negotiated.we_may_offer:
            offering.refuse(T.IncompatibleModes(
                f"the peer is in '{escape_text(session.negotiated.their_mode)}' mode"))
            if outgoings:
                print("Not offering: the peer is in "
                      f"'{escape_text(session.negotiated.their_mode)}' mode",
                      file=cfg.stderr, flush=True)
        else:
            offering.start(session, path)
        closed = session.when_closed()
        # our offers given and typed are done, and the human ended the input
        ours_and_input = lines.when_ended().addCallback(lambda _: offering.done())
        yield peer.unless_error(defer.DeferredList([ours_and_input, closed],
                                                   fireOnOneCallback=True))
        if not closed.called:
            # we end it: the offers the peer announced (session-totals,
            # said before its first offer) come and get our answer first
            # (the questions have theirs: input ended), bounded by
            # --peer-timeout (then we close all the same: what did not come
            # is the peer's to report); else an offer in flight, refused
            # after our close, reads "the peer ended the session" there,
            # not "declined"
            answered = give_up_after(receiving.answered(session.totals_agreed),
                                     reactor, cfg.peer_timeout,
                                     "the peer's announced offers", PEER_TIMEOUT_HINT)
            answered.addErrback(lambda f: f.trap(PeerTimeout))
            yield peer.unless_error(defer.DeferredList([answered, closed],
                                                       fireOnOneCallback=True))
        if not closed.called:
            # and the offers we accepted arrive whole: closing now would
            # cancel one in flight and keep a partial of what the human
            # asked for (each offer's own inactivity timeout bounds this)
            arrived = defer.DeferredList(list(receiving.done))
            yield peer.unless_error(defer.DeferredList([arrived, closed],
                                                       fireOnOneCallback=True))
        yield peer.unless_error(session.close())
        # the peer may end the session while our human is asked
        end_questions(cfg)
        yield ended(cfg, receiving, offering.failures, offering.offered)
        print("Session complete.", file=cfg.stderr, flush=True)
    yield run_and_close(reactor, cfg, w, body)


@defer.inlineCallbacks
def ended(cfg, receiving, failures, offered):
    """The end of a session: fails when the peer's offers (``receiving``)
    or ours (``failures`` of ``offered``) did not all complete. When both
    did not, each is said on its own line and the ERROR line counts them,
    so neither hides the other (docs/cli.md, "Messages": a peer
    acknowledging our offer with a wrong hash went unreported); the status
    is 1 unless every failure was declined."""
    ours = outcome(failures, offered, "offers we made")
    theirs = None
    try:
        yield receiving.finished()
    except Exception as e:  # noqa: BLE001 -- said below, beside ours
        theirs = e
    if theirs is not None and ours is not None:
        say(cfg, f"Receiving: {escape_text(theirs)}")
        say(cfg, f"Sending: {escape_text(ours)}")
        raise outcome([theirs, ours], 2, "directions (the peer's offers, ours)")
    if theirs is not None or ours is not None:
        raise theirs or ours
