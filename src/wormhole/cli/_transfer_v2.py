"""``wormhole send PATH...`` and ``wormhole receive`` over Dilated File
Transfer (transfer-v2, docs/transfer-v2.md "The CLI"), with the classic
protocol as fallback.

Both sides announce ``transfer-v2`` in their ``app_versions`` (unless
``--classic``) and wait for the peer's: when the peer announces it too,
the paths are offered one by one on a transfer-v2 session; when it does
not (the reference 0.24, wormhole-william, older clients), the classic
protocol runs on the same wormhole, and we say which one was used.

The receiving side asks about each offer (``--accept-file`` accepts all)
and writes it under the classic receiver's rules (``_incoming``, through
``transfer_v2._sink``).
"""
import os

import tqdm
from twisted.internet import defer

from .. import transfer_v2 as T
from ..errors import TransferError
from .._inactivity import Watchdog, silence
from .._transit._hints import parse_relay_string
from ..transfer_v2 import _versions
from ..util import dict_to_bytes
from ._display import escape_text, naturalsize
from ._transfer import PEER_TIMEOUT_HINT
from ._text import VERIFICATION_REJECTED

# how long a session survives without any connection to the peer (a peer
# that was killed never closes; Dilation would try to reconnect forever):
# then it ends, and a resumable file keeps its bytes for the next attempt
PEER_TIMEOUT = 60.0
CLASSIC_USED = "The peer does not speak transfer-v2: using the classic protocol."
V2_USED = "Using transfer-v2 (Dilated File Transfer)."


def wormhole_kwargs(cfg, mode):
    """What ``make_wormhole`` adds for transfer-v2 (nothing with --classic)."""
    if cfg.classic:
        return {}
    return {"versions": T.app_versions(mode), "dilation": True}


def peer_speaks_v2(versions):
    return bool(_versions._their_versions(versions).keys() & set(_versions.OUR_VERSIONS))


def check_transit_helper(cfg):
    """A malformed --transit-helper fails before a code is allocated, as
    with the classic sender (its own message)."""
    if cfg.transit_helper:
        try:
            parse_relay_string(cfg.transit_helper)
        except ValueError as e:
            raise TransferError(f"bad --transit-helper {cfg.transit_helper!r}: {e}") from None


def _timeouts(cfg):
    """A session's timeouts: Dilation without the peer for PEER_TIMEOUT,
    and an offer's silence of ``--peer-timeout`` (docs/security.md)."""
    return {"peer_timeout": PEER_TIMEOUT, "inactivity_timeout": cfg.peer_timeout,
            "timeout_hint": PEER_TIMEOUT_HINT}


def _dilate_kwargs(cfg):
    kwargs = {"no_listen": not cfg.listen}
    if cfg.transit_helper:
        kwargs["transit_relay_location"] = cfg.transit_helper
    return kwargs


def _bar(cfg, total, desc, position=0, hidden=False, initial=0):
    """Bytes with rate and ETA on stderr (none with --hide-progress)."""
    return tqdm.tqdm(total=total, unit="B", unit_scale=True, leave=True, desc=desc,
                     file=cfg.stderr, disable=cfg.hide_progress or hidden,
                     dynamic_ncols=False, ncols=80, position=position, initial=initial)


def describe(outgoing):
    offer = outgoing.offer
    if outgoing.is_directory:
        return (f"directory '{offer.base}' ({len(offer.files)} files, "
                f"{naturalsize(offer.size)})")
    return f"file '{offer.filename}' ({naturalsize(offer.bytes)})"


def _paths(cfg):
    return tuple(cfg.paths) or (cfg.what,)


def prepare_all(cfg):
    """transfer-v2 offers for every path (fails before a code is used)."""
    def warn(outgoing):
        for path, why in outgoing.skipped:
            print(f"Warning: not sending '{path}': {why}", file=cfg.stderr, flush=True)
    outgoings = [T.prepare_offer(p) for p in _paths(cfg)]
    for o in outgoings:
        warn(o)
    return outgoings


# -- sending ---------------------------------------------------------------------
@defer.inlineCallbacks
def send_paths(reactor, cfg):
    """``wormhole send PATH...``: transfer-v2 when the peer has it, classic
    otherwise (one path only)."""
    from . import cmd_send
    from ._common import make_wormhole, run_and_close
    outgoings = prepare_all(cfg)
    check_transit_helper(cfg)
    note = cmd_send._ConsumedNote(cfg.stdout)
    w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update,
                      **wormhole_kwargs(cfg, "send"))

    @defer.inlineCallbacks
    def body():
        yield cmd_send._announce_code(cfg, w)
        versions = yield w.get_versions()
        if not peer_speaks_v2(versions):
            if len(outgoings) != 1:
                why = ("the receiver only speaks the classic protocol, which sends one file "
                       f"or directory per code; {len(outgoings)} were given (send a folder "
                       "holding them, or one at a time)")
                # a classic receiver waits for an offer: tell it we gave up (spec 9.1)
                w.send_message(dict_to_bytes({"error": why}))
                raise TransferError(why)
            print(CLASSIC_USED, file=cfg.stderr, flush=True)
            yield cmd_send.send_path(reactor, cfg, w)
            return
        if not (yield cmd_send._verified(reactor, cfg, w)):
            w.send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))
            raise TransferError(VERIFICATION_REJECTED)
        print(V2_USED, file=cfg.stderr, flush=True)
        yield _send_session(reactor, cfg, w, outgoings)
    yield run_and_close(reactor, w, body)


def _peer_says(cfg):
    return lambda text: print(f"peer says: {escape_text(text)}", file=cfg.stderr, flush=True)


@defer.inlineCallbacks
def _send_session(reactor, cfg, w, outgoings):
    session = T.TransferSession(reactor, w, "send", dilate_kwargs=_dilate_kwargs(cfg),
                                on_text=_peer_says(cfg), **_timeouts(cfg))
    yield session.start()
    try:
        failures = yield offer_all(cfg, session, outgoings)
    finally:
        yield session.close()
    if failures:
        raise TransferError(f"{len(failures)} of {len(outgoings)} offers did not complete")
    print("Transfer complete.", file=cfg.stderr, flush=True)


@defer.inlineCallbacks
def offer_all(cfg, session, outgoings):
    """Offer each Outgoing in turn, with progress; fires with the errors
    of those that did not complete (rejected ones included)."""
    failures = []
    # a session bar beside each offer's when there is more than one
    total = _bar(cfg, sum(o.size for o in outgoings), "total", position=1,
                 hidden=len(outgoings) < 2)
    try:
        for o in outgoings:
            print(f"Offering {describe(o)}", file=cfg.stderr, flush=True)
            bar = _bar(cfg, o.size, "offer")
            timed = cfg.timing.add("transfer", bytes=o.size)  # docs/timing.md

            def progress(n, bar=bar):
                bar.update(n)
                total.update(n)
            try:
                with bar:
                    result = yield session.offer_prepared(o, progress)
            except T.OfferRejected as e:
                failures.append(e)
                print(f"Rejected: {escape_text(e.reason)}", file=cfg.stderr, flush=True)
                continue
            except TransferError as e:
                failures.append(e)
                print(f"Failed: {escape_text(e)}", file=cfg.stderr, flush=True)
                continue
            timed.finish()
            resumed = ""
            if result.resumed_from:
                resumed = (f"; resumed at byte {result.resumed_from}, "
                           f"{o.size - result.resumed_from} bytes sent")
            print(f"Sent {describe(o)}: {result.files} file(s) confirmed{resumed}",
                  file=cfg.stderr, flush=True)
    finally:
        total.close()
    return failures


# -- receiving -------------------------------------------------------------------
class Receiving:
    """Decides about each incoming offer, one question at a time."""

    def __init__(self, reactor, cfg, ask):
        self._reactor = reactor
        self._cfg = cfg
        self._ask = ask
        self._questions = defer.DeferredLock()
        self.cwd = os.path.abspath(cfg.cwd or os.getcwd())
        self.done = []       # when_done() of every accepted offer
        self.failures = []
        self._named = False  # -o names the first offer only
        self._session = None  # set by expect_offers (receive, not share)
        self._between = None  # Watchdog while no offer is under way
        self._under_way = 0   # offers not yet done (asked, or being received)
        self.gave_up = None   # PeerTimeout: the sender offered nothing more

    def expect_offers(self, session):
        """``wormhole receive``: the sender offers at once, one offer after
        the other, then closes. While no offer is under way, give up after
        ``--peer-timeout`` without a new one (docs/security.md): the session
        is closed and ``gave_up`` says why."""
        self._session = session
        self._wait_for_next()

    def _wait_for_next(self):
        seconds = self._cfg.peer_timeout
        if seconds is not None and self._under_way == 0:
            self._between = Watchdog(self._reactor, seconds,
                                     lambda: self._no_offer(seconds))

    def _no_offer(self, seconds):
        self._between = None
        self.gave_up = silence("the sender's next offer", seconds, PEER_TIMEOUT_HINT)
        self._session.close()

    def _offer_over(self, result):
        self._under_way -= 1
        if self._session is not None and self.gave_up is None and self._between is None:
            self._wait_for_next()

    def stop_waiting(self):
        """The session is over: no more offers to wait for."""
        if self._between is not None:
            self._between.stop()
            self._between = None
        self._session = None

    @defer.inlineCallbacks
    def finished(self):
        """Once every accepted offer ended: fails if any was refused or failed."""
        yield defer.DeferredList(self.done)
        if self.failures:
            raise TransferError(f"{len(self.failures)} offer(s) were not received")

    def _target(self, incoming):
        """(folder, name or None) for this offer."""
        out = self._cfg.output_file
        if out and os.path.isdir(os.path.join(self.cwd, out)):
            return os.path.join(self.cwd, out), None
        if out and not self._named:
            self._named = True
            full = os.path.abspath(os.path.join(self.cwd, out))
            return os.path.dirname(full), os.path.basename(full)
        return self.cwd, None

    def on_offer(self, incoming):
        if self._between is not None:
            self._between.stop()
            self._between = None
        self._under_way += 1
        incoming.when_done().addBoth(self._offer_over)
        self._questions.run(self._decide, incoming).addErrback(
            lambda f: incoming.reject(f"the receiver failed: {f.getErrorMessage()}"))

    @defer.inlineCallbacks
    def _decide(self, incoming):
        cfg = self._cfg
        offer = incoming.offer
        if cfg.only_text:
            # the peer hears what classic receive says in this case
            self._refuse(incoming, "transfer rejected",
                         "--only-text accepts only text messages")
            return
        if incoming.is_directory:
            what = (f"directory '{escape_text(offer.base)}' ({len(offer.files)} files, "
                    f"{naturalsize(offer.size)})")
        else:
            what = f"file '{escape_text(offer.filename)}' ({naturalsize(offer.bytes)})"
        folder, name = self._target(incoming)
        print(f"Offered {what}", file=cfg.stderr, flush=True)
        if not cfg.accept_file:
            try:
                answer = yield self._ask(self._reactor, cfg, "ok? (Y/n): ")
            except EOFError:
                answer = "n"
            if answer.strip().lower() not in ("", "y", "yes"):
                self._refuse(incoming, "transfer rejected")
                return
        d = incoming.when_done()
        self.done.append(d)
        # fires once our answer is out (a resume's kept bytes checked)
        yield incoming.accept(folder, name, peer_reason="transfer rejected")
        if incoming.refused:
            print(f"Refused: {escape_text(incoming.refused)}", file=cfg.stderr, flush=True)
        if incoming.discarded:
            print(incoming.discarded, file=cfg.stderr, flush=True)
        if incoming.resumed_from:
            print(f"Resuming at byte {incoming.resumed_from} of {incoming.size} (the bytes "
                  "an interrupted transfer left)", file=cfg.stderr, flush=True)
        bar = _bar(cfg, incoming.size, "receive", initial=incoming.resumed_from)
        incoming.progress = bar.update
        d.addBoth(self._report, bar, incoming)

    def _refuse(self, incoming, reason, why=None):
        # like classic receive, a refused offer makes the command fail
        incoming.reject(reason)
        self.failures.append(reason)
        print(f"Refused: {why or reason}", file=self._cfg.stderr, flush=True)

    def _report(self, result, bar, incoming):
        bar.close()
        cfg = self._cfg
        if incoming.discarded and incoming.resumed_from:  # the sender started over
            print(incoming.discarded, file=cfg.stderr, flush=True)
        if isinstance(result, T.Received):
            print(f"Received {'files' if result.files != 1 else 'file'} written to: "
                  f"{escape_text(result.path)}", file=cfg.stderr, flush=True)
        elif isinstance(result, T.Rejected):
            self.failures.append(result.reason)
            if not incoming.refused:  # else said already, with the local reason
                print(f"Not received: {escape_text(result.reason)}", file=cfg.stderr,
                      flush=True)
        else:
            self.failures.append(result.getErrorMessage())
            print(f"Failed: {escape_text(result.getErrorMessage())}", file=cfg.stderr,
                  flush=True)


def new_session(reactor, cfg, w, mode, receiving, on_text):
    """A TransferSession with the CLI's Dilation options; offers go to
    ``receiving`` (a ``Receiving``)."""
    return T.TransferSession(reactor, w, mode, on_offer=receiving.on_offer, on_text=on_text,
                             dilate_kwargs=_dilate_kwargs(cfg), free_space=cfg.free_space,
                             **_timeouts(cfg))


@defer.inlineCallbacks
def receive_session(reactor, cfg, w):
    """The transfer-v2 side of ``wormhole receive``: until the sender closes."""
    from ._common import ask
    receiving = Receiving(reactor, cfg, ask)
    session = new_session(reactor, cfg, w, "receive", receiving,
                          lambda text: print(escape_text(text), file=cfg.stdout, flush=True))
    print(V2_USED, file=cfg.stderr, flush=True)
    yield session.start()
    receiving.expect_offers(session)
    yield session.when_closed()
    receiving.stop_waiting()
    if receiving.gave_up is not None:
        raise receiving.gave_up
    yield receiving.finished()


