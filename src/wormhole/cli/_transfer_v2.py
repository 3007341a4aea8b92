"""``wormhole send``, ``wormhole receive`` and ``wormhole share`` over
Dilated File Transfer (transfer-v2, docs/transfer-v2.md "The CLI"), with
the classic protocol as fallback.

Both sides announce ``transfer-v2`` in their ``app_versions`` (unless
``--classic``) and wait for the peer's: when the peer announces it too,
a text goes as a control message and the paths are offered one by one on
a transfer-v2 session; when it does not (the reference 0.24,
wormhole-william, older clients), the classic protocol runs on the same
wormhole, and we say which one was used.

What the user sees is the classic CLI's (``_transfer``'s words): the path
line (``Sending (->relay:...)..``), a progress bar per offer (and one for
the session), the summary line, one line when the peer goes away
mid-transfer, and the same exit statuses (docs/cli.md "Exit status").

The receiving side asks about each offer (``--accept-file`` accepts all)
and writes it under the receiving rules (``wormhole._landing``, through
``transfer_v2._sink``).
"""
import os
import re
import stat

import attrs
import tqdm
from tqdm.utils import disp_len
from twisted.internet import defer

from .. import transfer_v2 as T
from .._dilation.manager import OldPeerCannotDilateError
from .._status import ConnectedPeer
from ..errors import TransferError
from .._inactivity import Watchdog, silence
from .._landing import BadOffer
from .._transit._hints import parse_relay_string
from .._wording import peer_left
from ..transfer import VERIFICATION_REJECTED, Declined, peer_gave_up
from ..transfer import parse_message as _parse
from ..transfer_v2 import _versions
from ..util import dict_to_bytes
from . import _progress
from ._display import escape_text, naturalsize, received_text

# how long a session survives without any connection to the peer (a peer
# that was killed never closes; Dilation would try to reconnect forever):
# then it ends, and a resumable file keeps its bytes for the next attempt.
# A shorter --peer-timeout shortens it too.
PEER_TIMEOUT = 60.0
CLASSIC_USED = "The peer does not speak transfer-v2: using the classic protocol."
V2_USED = "Using transfer-v2 (Dilated File Transfer)."
CANNOT_DILATE = ("The peer announces transfer-v2 but cannot dilate (no Dilation version we "
                 "share): using the classic protocol.")
NOT_A_FILE = ("transfer-v2 sends regular files and directories: using the classic "
              "protocol for '{}'.")
TEXT_SENT = "text message sent"


def say(cfg, line):
    """One line on stderr above the progress bars: tqdm clears them, writes
    the line and draws them again below it (a plain print would write
    over a bar, and the session's bar would overwrite the line)."""
    tqdm.tqdm.write(line, file=cfg.stderr)
    cfg.stderr.flush()


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
    """A session's timeouts: Dilation without the peer for PEER_TIMEOUT
    (or --peer-timeout if shorter), and an offer's silence of
    ``--peer-timeout`` (docs/security.md)."""
    unreachable = PEER_TIMEOUT
    if cfg.peer_timeout is not None:
        unreachable = min(PEER_TIMEOUT, cfg.peer_timeout)
    return {"peer_timeout": unreachable, "inactivity_timeout": cfg.peer_timeout,
            "timeout_hint": _progress.PEER_TIMEOUT_HINT}


class ConnectionPath:
    """How the data goes, from Dilation's status (``ConnectedPeer``'s
    hint description: ``->tcp:host:port``, ``->relay:...``); says so again
    when Dilation reconnects after losing the connection."""

    # Dilation's name for a connection the peer opened to our listener
    INBOUND = "inbound"

    def __init__(self, cfg):
        self._cfg = cfg
        self.description = "?"
        self._connected = None  # None: never; then whether we are now

    def status_update(self, status):
        connected = isinstance(status.peer_connection, ConnectedPeer)
        if connected:
            # the host names came from the peer's hints
            self.description = escape_text(self._as_classic(
                status.peer_connection.hint_description, status.peer_connection.peer_address))
            if self._connected is False:
                say(self._cfg, f"Reconnected to the peer ({self.description})")
        if self._connected is not None or connected:
            self._connected = connected

    @classmethod
    def _as_classic(cls, hint, peer_address=None):
        """Dilation's description in classic Transit's words: a TCP relay
        is "->relay:tcp:HOST:PORT" there (Dilation leaves out "tcp:"),
        a connection the peer opened to our listener "<-tcp:HOST:PORT"
        (where it came from: our status's ``peer_address``; "<-tcp" when
        unknown)."""
        if hint == cls.INBOUND:
            return f"<-tcp:{peer_address}" if peer_address else "<-tcp"
        relayed = hint.startswith("->relay:")
        if relayed and not re.match(r"->relay:(tcp|tor|wss?):", hint):
            return "->relay:tcp:" + hint[len("->relay:"):]
        return hint


def _dilate_kwargs(cfg, path):
    kwargs = {"no_listen": not cfg.listen, "status_update": path.status_update}
    if cfg.transit_helper:
        kwargs["transit_relay_location"] = cfg.transit_helper
    return kwargs


def file_label(segments, columns):
    """A file's path inside a directory offer as the name of its bar: the
    peer's text escaped, and cut from the left ("...") to at most a third
    of the terminal's ``columns`` (display width: wide characters count
    two), so that the bar, counts and rate still fit on the line."""
    label = escape_text("/".join(segments))
    room = max(columns // 3, 8)
    if disp_len(label) <= room:
        return label
    while disp_len(label) > room - 3:
        label = label[1:]
    return "..." + label


class _Meter:
    """One offer's bytes: its progress bar (and the session's), the path
    line when its first bytes move, and what to say when it ends. For a
    directory, ``file_started`` adds the current file's bar below the
    offer's (named by the file, gone when the next begins or the offer
    ends)."""

    def __init__(self, reactor, cfg, path, verbs, size, desc, total=None, initial=0):
        self._reactor = reactor
        self._cfg = cfg
        self._path = path
        self._verbs = verbs  # ("Sending", "Sent") or ("Receiving", "Received")
        self.size = size
        # below the session's bar, if any, and gone when done (the summary
        # line says the rest); alone, it stays, as classic's does
        below = total is not None and not total.disable
        self._position = 1 if below else 0
        self._bar = _progress.progress_bar(cfg, size, desc, initial=initial,
                                           position=self._position, leave=not below)
        self._total = total
        self._file = None  # the current file's bar, in a directory offer
        self.moved = 0
        self.initial = initial
        self._started = None

    def update(self, nbytes):
        if self._started is None:
            self._started = self._reactor.seconds()
            say(self._cfg, _progress.path_line(self._verbs[0], self._path.description))
        self.moved += nbytes
        self._bar.update(nbytes)
        if self._file is not None:
            self._file.update(nbytes)
        if self._total is not None:
            self._total.update(nbytes)

    def follow(self, start):
        """After a resume, the sender's answer says how many bytes we keep
        (``start``; fewer than we asked when kept files changed at the
        sender): the bar's starting value follows, without counting the
        difference as bytes that moved (tqdm's ``initial`` and last
        printed count move with it, so the rate stays true)."""
        delta = start - self.initial
        if delta:
            self.initial = start
            bar = self._bar
            bar.n += delta
            bar.initial += delta
            bar.last_print_n += delta
            bar.refresh()

    def file_started(self, segments, size, offset):
        """The next file of a directory offer begins (from byte ``offset``
        after a resume): its bar replaces the previous file's."""
        self._close_file()
        columns = _progress.terminal_width(self._cfg.stderr) or _progress.DEFAULT_WIDTH
        self._file = _progress.progress_bar(self._cfg, size, file_label(segments, columns),
                                            initial=offset, position=self._position + 1,
                                            leave=False)

    def _close_file(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self):
        self._close_file()
        self._bar.close()

    @property
    def started(self):
        """When the first bytes moved (reactor seconds), or None."""
        return self._started

    def summary(self):
        started = self._started if self._started is not None else self._reactor.seconds()
        return _progress.summary(self._verbs[1], self.moved, self._reactor.seconds() - started,
                                 self._path.description)

    def lost(self, who, error):
        """The error for an offer that ended before it completed: once
        bytes moved, it says how far it got (like classic's "the receiver
        closed the connection after X of Y were sent")."""
        if self._started is None or not isinstance(error, (T.OfferLost, T.ReceiveFailed)):
            return error
        return TransferError(peer_left(who, self.initial + self.moved, self.size,
                                                 "went away") + f" ({error})")


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
            say(cfg, f"Warning: not sending '{path}': {why}")
    outgoings = [T.prepare_offer(p) for p in _paths(cfg)]
    for o in outgoings:
        warn(o)
    return outgoings


def _not_a_file(path):
    """Whether ``path`` is something transfer-v2 does not send but classic
    does: a block device, read as a file of its size (the reference's habit)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # prepare_offer says what is wrong
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def outcome(failures, offers, what):
    """The error of a session in which ``failures`` (exceptions) of
    ``offers`` offers did not complete: the failure itself when there was
    one offer, else a count; declined (exit 3) when every failure was."""
    if not failures:
        return None
    if offers == 1 and len(failures) == 1:
        return failures[0]
    message = f"{len(failures)} of {offers} {what} did not complete"
    if all(isinstance(f, Declined) for f in failures):
        return Declined(message)
    return TransferError(message)


# -- sending ---------------------------------------------------------------------
@defer.inlineCallbacks
def send_paths(reactor, cfg):
    """``wormhole send PATH...``: transfer-v2 when the peer has it, classic
    otherwise (one path only)."""
    from . import cmd_send
    paths = _paths(cfg)
    if len(paths) == 1 and _not_a_file(paths[0]):
        say(cfg, NOT_A_FILE.format(escape_text(paths[0])))
        yield cmd_send.send_path(reactor, cfg)
        return
    outgoings = prepare_all(cfg)
    check_transit_helper(cfg)
    yield _send_v2_or_classic(
        reactor, cfg,
        classic=lambda cfg, w: cmd_send.send_path(reactor, cfg, w),
        over_v2=lambda session, path: _send_session(reactor, cfg, session, outgoings, path),
        refuse_classic=lambda w, reason: _one_path_for_classic(w, outgoings, reason))


@defer.inlineCallbacks
def _send_v2_or_classic(reactor, cfg, classic, over_v2, refuse_classic=lambda w, reason: None):
    """What the sending commands share: announce the code, then
    ``over_v2(session, path)`` once a transfer-v2 session is open, or
    ``classic(cfg, w)`` on the same wormhole when the peer does not speak
    transfer-v2 or cannot dilate (``refuse_classic(w, reason)`` may refuse
    that first). Fires with run_and_close's result."""
    from . import cmd_send
    from ._common import make_wormhole, run_and_close
    note = cmd_send._ConsumedNote(cfg.stdout)
    w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update,
                      **wormhole_kwargs(cfg, "send"))

    @defer.inlineCallbacks
    def body():
        yield cmd_send._announce_code(cfg, w)
        if not peer_speaks_v2((yield w.get_versions())):
            refuse_classic(w, "the receiver only speaks the classic protocol")
            say(cfg, CLASSIC_USED)
            yield classic(cfg, w)
            return
        yield _verified_or_declined(reactor, cfg, w)
        path = ConnectionPath(cfg)
        session = sending_session(reactor, cfg, w, path)
        if not (yield started(cfg, session)):
            refuse_classic(w, "the receiver cannot dilate, so only the classic protocol is left")
            # the human already said yes to the verifier
            yield classic(attrs.evolve(cfg, verify=False), w)
            return
        yield over_v2(session, path)
    return (yield run_and_close(reactor, w, body))


def _one_path_for_classic(w, outgoings, reason):
    """The classic protocol sends one file or directory per code: with
    several, tell the waiting classic receiver we gave up (spec 9.1) and
    fail saying ``reason``."""
    if len(outgoings) != 1:
        why = (f"{reason}, which sends one file or directory per code; {len(outgoings)} "
               "were given (send a folder holding them, or one at a time)")
        w.send_message(dict_to_bytes({"error": why}))
        raise TransferError(why)


def sending_session(reactor, cfg, w, path):
    """The TransferSession of ``wormhole send`` (mode ``send``)."""
    return T.TransferSession(reactor, w, "send", dilate_kwargs=_dilate_kwargs(cfg, path),
                             on_text=peer_says(cfg), **_timeouts(cfg))


@defer.inlineCallbacks
def started(cfg, session):
    """Start ``session``: True once it is open (we say transfer-v2 is
    used), False when the peer announced transfer-v2 but cannot dilate:
    its version message has no ``can-dilate`` version we share. The
    library gives applications no accessor for that message, but
    ``w.dilate()`` finds out at once, from it, before any Dilation
    message is sent; we say the classic protocol is used, and the caller
    falls back to it on the same wormhole."""
    try:
        yield session.start()
    except OldPeerCannotDilateError:
        say(cfg, CANNOT_DILATE)
        return False
    say(cfg, V2_USED)
    return True


@defer.inlineCallbacks
def _verified_or_declined(reactor, cfg, w):
    """With --verify, the human's word on the verifier; a no tells the
    peer and ends the command as declined (exit 3)."""
    from . import cmd_send
    if not (yield cmd_send._verified(reactor, cfg, w)):
        w.send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))
        raise Declined(VERIFICATION_REJECTED)


@defer.inlineCallbacks
def send_text(reactor, cfg, text):
    """``wormhole send --text``: the text as transfer-v2's control message
    (spec "Control Channel Messages") when the peer has it, classic
    otherwise. Fires with True once it went, False if interrupted."""
    from . import cmd_send

    @defer.inlineCallbacks
    def over_v2(session, path):
        try:
            session.send_text(text)
        finally:
            yield session.close()
    return (yield _send_v2_or_classic(
        reactor, cfg, classic=lambda cfg, w: cmd_send.send_text_on(reactor, cfg, w, text),
        over_v2=over_v2))


def peer_says(cfg):
    """The peer's free-form texts (control messages) on stderr, escaped."""
    return lambda text: say(cfg, f"peer says: {escape_text(text)}")


@defer.inlineCallbacks
def _send_session(reactor, cfg, session, outgoings, path):
    try:
        failures = yield offer_all(reactor, cfg, session, outgoings, path)
    finally:
        yield session.close()
    error = outcome(failures, len(outgoings), "offers")
    if error is not None:
        raise error
    say(cfg, "Transfer complete.")


@defer.inlineCallbacks
def offer_all(reactor, cfg, session, outgoings, path):
    """Offer each Outgoing in turn, with progress; fires with the errors
    of those that did not complete (rejected ones included). With one
    offer, its error is left to the caller to say (the ERROR line)."""
    failures = []
    several = len(outgoings) > 1
    size = sum(o.size for o in outgoings)
    # a session bar above each offer's when there is more than one; the
    # receiver gets the totals for its own (a peer with "session-totals")
    total = _progress.progress_bar(cfg, size, "total", hidden=not several)
    session.announce_totals(len(outgoings), size)

    def failed(error, label):
        failures.append(error)
        if several:
            say(cfg, f"{label}: {escape_text(error)}")
    try:
        for o in outgoings:
            say(cfg, f"Offering {describe(o)}")
            meter = _Meter(reactor, cfg, path, ("Sending", "Sent"), o.size, "offer", total)
            timed = cfg.timing.add("transfer", bytes=o.size)  # docs/timing.md
            try:
                result = yield session.offer_prepared(o, meter.update, meter.file_started)
            except T.OfferRejected as e:
                failed(peer_gave_up("receiver", e.reason), "Rejected")
                continue
            except TransferError as e:
                failed(meter.lost("receiver", e), "Failed")
                continue
            finally:
                meter.close()
            timed.finish()
            resumed = ""
            if result.resumed_from:
                resumed = (f"; resumed at byte {result.resumed_from}, "
                           f"{o.size - result.resumed_from} bytes sent")
            say(cfg, f"Sent {describe(o)}: {result.files} file(s) confirmed{resumed}")
            say(cfg, meter.summary())
    finally:
        total.close()
    return failures


# -- receiving -------------------------------------------------------------------
class Receiving:
    """Decides about each incoming offer, one question at a time."""

    def __init__(self, reactor, cfg, ask, path=None):
        self._reactor = reactor
        self._cfg = cfg
        self._ask = ask
        # the session's ConnectionPath (given to its w.dilate())
        self._path = path or ConnectionPath(cfg)
        self._questions = defer.DeferredLock()
        self.cwd = os.path.abspath(cfg.cwd or os.getcwd())
        self.done = []       # when_done() of every accepted offer
        self.failures = []   # an exception per offer that did not complete
        self._unsaid = []    # the first one's line, kept while it is the only offer
        self.offers = 0
        self._named = False  # -o names the first offer only
        self._session = None  # set by expect_offers (receive, not share)
        self._between = None  # Watchdog while no offer is under way
        self._under_way = 0   # offers not yet done (asked, or being received)
        self.gave_up = None   # PeerTimeout: the sender offered nothing more
        # what the offers received whole add up to, for the session's line
        # (the sender announces no total: offers come one at a time)
        self._received = {"offers": 0, "files": 0, "bytes": 0, "first": None, "last": None}
        self._total = None  # the session's bar, when the sender said its totals

    def totals(self, offers, nbytes):
        """The sender's "session-totals" (before its first offer): with
        more than one offer coming, a session bar above each offer's, as
        the sender shows it. Totals that come after an offer, or a second
        time, are ignored (the bars are placed already)."""
        if self._total is None and self.offers == 0 and offers > 1:
            self._total = _progress.progress_bar(self._cfg, nbytes, "total")

    def _close_total(self):
        if self._total is not None:
            self._total.close()

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
        self.gave_up = silence("the sender's next offer", seconds,
                               _progress.PEER_TIMEOUT_HINT)
        self._session.close()

    def _offer_over(self, result):
        self._under_way -= 1
        if self._session is not None and self.gave_up is None and self._between is None:
            self._wait_for_next()

    def stop_waiting(self):
        """The session is over: no more offers to wait for."""
        self._close_total()
        if self._between is not None:
            self._between.stop()
            self._between = None
        self._session = None

    @defer.inlineCallbacks
    def finished(self):
        """Once every accepted offer ended: fails if any was refused or
        failed (declined, exit 3, when every one was refused)."""
        yield defer.DeferredList(self.done)
        self._close_total()
        if self.offers > 1:
            say(self._cfg, self.session_line())
        error = outcome(self.failures, self.offers, "offers")
        if error is not None and error is not self.failures[0]:
            self._say_unsaid()
        if error is not None:
            raise error

    def session_line(self):
        """The session in one line, when more than one offer came (each
        has its own summary): "Session: 2 of 3 offers received (5 files);
        received 6.0 MB in 1.20 s (5.0 MB/s) via PATH", the time from the
        first byte to the end of the last offer received."""
        got = self._received
        seconds = 0.0
        if got["first"] is not None:
            seconds = got["last"] - got["first"]
        return (f"Session: {got['offers']} of {self.offers} offers received "
                f"({got['files']} file{'s' if got['files'] != 1 else ''}); "
                + _progress.summary("received", got["bytes"], seconds, self._path.description))

    def _count_received(self, result, meter):
        got = self._received
        got["offers"] += 1
        got["files"] += result.files
        got["bytes"] += meter.moved
        if meter.started is not None and (got["first"] is None or meter.started < got["first"]):
            got["first"] = meter.started
        got["last"] = self._reactor.seconds()

    def _failed(self, error, label):
        """An offer did not complete: said at once, except while it is the
        only offer (then the command's ERROR line says it, once)."""
        self.failures.append(error)
        self._unsaid.append(f"{label}: {escape_text(error)}")
        if self.offers > 1:
            self._say_unsaid()

    def _say_unsaid(self):
        for line in self._unsaid:
            say(self._cfg, line)
        self._unsaid = []

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
        self.offers += 1
        if self.offers > 1:
            self._say_unsaid()
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
        say(cfg, f"Offered {what}")
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
            # our rules refused it: a malformed offer (an unusable name) is
            # a failure (exit 1) as in classic receive; it would overwrite,
            # no room: declined
            bad = isinstance(incoming.refusal, BadOffer)
            self._failed(incoming.refusal if bad else Declined(incoming.refused), "Refused")
            return
        said = incoming.discarded
        if said:
            say(cfg, said)
        if incoming.resumed_from:
            say(cfg, f"Resuming at byte {incoming.resumed_from} of {incoming.size} (the bytes "
                     "an interrupted transfer left)")
        meter = _Meter(self._reactor, cfg, self._path, ("Receiving", "Received"),
                       incoming.size, "receive", total=self._total,
                       initial=incoming.resumed_from)

        # the sender's answer to a resume may keep fewer bytes than we
        # asked (IncomingOffer.held follows it): the bar too
        def progress(nbytes):
            meter.follow(incoming.held)
            meter.update(nbytes)

        def file_started(*started):
            meter.follow(incoming.held)
            meter.file_started(*started)
        incoming.progress = progress
        incoming.file_started = file_started
        d.addBoth(self._report, meter, incoming, said)

    def _refuse(self, incoming, reason, why=None):
        # like classic receive, a refused offer makes the command fail
        # (declined: exit 3)
        incoming.reject(reason)
        self._failed(Declined(why or reason), "Refused")

    def _report(self, result, meter, incoming, said):
        meter.close()
        cfg = self._cfg
        if incoming.discarded and incoming.discarded != said:  # from the sender's answer
            say(cfg, incoming.discarded)
        if isinstance(result, T.Received):
            self._count_received(result, meter)
            say(cfg, f"Received {'files' if result.files != 1 else 'file'} written to: "
                     f"{escape_text(result.path)}")
            say(cfg, meter.summary())
        elif isinstance(result, T.Rejected):
            if not incoming.refused:  # else said already, with the local reason
                self._failed(TransferError(f"not received: {result.reason}"), "Failed")
        else:
            self._failed(meter.lost("sender", result.value), "Failed")


def new_session(reactor, cfg, w, mode, receiving, on_text, path):
    """A TransferSession with the CLI's Dilation options; offers go to
    ``receiving`` (a ``Receiving``), ``path`` follows the connection."""
    return T.TransferSession(reactor, w, mode, on_offer=receiving.on_offer, on_text=on_text,
                             on_totals=receiving.totals, dilate_kwargs=_dilate_kwargs(cfg, path),
                             free_space=cfg.free_space, **_timeouts(cfg))


@defer.inlineCallbacks
def receive_session(reactor, cfg, w):
    """The transfer-v2 side of ``wormhole receive``: until the sender
    closes. A text (control message) is printed on stdout like classic's.
    Fires with None, or, when the sender cannot dilate after all, with
    the ``SenderMailbox`` whose ``first_message()`` the classic receiver
    reads first."""
    from ._common import ask
    path = ConnectionPath(cfg)
    receiving = Receiving(reactor, cfg, ask, path)
    session = new_session(reactor, cfg, w, "receive", receiving,
                          lambda text: print(received_text(text), file=cfg.stdout, flush=True),
                          path)
    mailbox = SenderMailbox(w, session)
    try:
        if not (yield started(cfg, session)):
            mailbox.hand_over()
            return mailbox
    except Exception:
        if mailbox.error is not None:
            raise mailbox.error from None
        raise
    receiving.expect_offers(session)
    yield session.when_closed()
    receiving.stop_waiting()
    if mailbox.error is not None:
        raise mailbox.error
    if receiving.gave_up is not None:
        raise receiving.gave_up
    yield receiving.finished()
    return None


class SenderMailbox:
    """The sender's first mailbox message, read while the transfer-v2
    session starts. The sender may still end it all there (spec 9.1's
    ``error``: its human rejected the verifier, before any dilation):
    that closes the session and ``error`` says why. When we fall back to
    the classic protocol instead (``hand_over()``), the message is the
    classic receiver's: ``first_message()`` gives it (or its failure)."""

    def __init__(self, w, session):
        self.error = None
        self._session = session
        self._arrived = None  # (True, body) or (False, Failure)
        self._waiting = []
        w.get_message().addCallbacks(self._got, self._failed)

    def hand_over(self):
        """The session is not used: the message is no longer ours."""
        self._session = None

    def _got(self, body):
        message = _parse(body)
        if self._session is not None and isinstance(message, dict) and "error" in message:
            self.error = peer_gave_up("sender", str(message["error"]))
            self._session.close()
        self._arrive((True, body))

    def _failed(self, f):
        # a wormhole closed with the message still awaited fails it: the
        # session says what happened, or the classic receiver gets it
        self._arrive((False, f))

    def _arrive(self, arrived):
        self._arrived = arrived
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            self._fire(d)

    def _fire(self, d):
        ok, result = self._arrived
        d.callback(result) if ok else d.errback(result)

    def first_message(self):
        d = defer.Deferred()
        if self._arrived is None:
            self._waiting.append(d)
        else:
            self._fire(d)
        return d
