"""Deciding about each transfer-v2 offer that comes in (``wormhole
receive`` and ``wormhole share``, docs/transfer-v2.md "The CLI"): one
question at a time (``--accept-file`` accepts all), the offer written
under the receiving rules (through ``transfer_v2``'s sink), its progress,
and what to say when it ends; the session's line when several came.

When the session is over and how long to wait for the next offer is the
``ReceiveFlow`` machine's (``wormhole.session``).
"""
import os
import time

from twisted.internet import defer
from twisted.python.failure import Failure

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import (
    MAX_AGE_DAYS,
    BadOffer,
    ReceiveFlow,
    Refused,
    check_not_existing,
    escape_text,
    expire,
    kept_for,
    naturalsize,
    outcome,
    target_path,
)
from ..transfer import Declined
from . import _kept
from .ui.connection_path import ConnectionPath
from .ui.progress import PEER_TIMEOUT_HINT, OfferProgress, SessionTotal, summary
from .ui.screen import say
from .ui.wording import describe, written_to

# how long a session we end waits for the peer's session-totals it has
# not said yet (it says them as its session opens: only a race needs this)
TOTALS_WAIT = 5.0


class Receiving:
    """Decides about each incoming offer, one question at a time.
    ``ask(reactor, cfg, prompt)`` fires with the human's answer;
    ``path`` is the session's ConnectionPath (given to its w.dilate())."""

    def __init__(self, reactor, cfg, ask, path=None):
        self._reactor = reactor
        self._cfg = cfg
        self._ask = ask
        self._path = path or ConnectionPath(cfg)
        self._flow = ReceiveFlow(reactor, cfg.peer_timeout, PEER_TIMEOUT_HINT)
        self._questions = defer.DeferredLock()
        self.cwd = os.path.abspath(cfg.cwd or os.getcwd())
        self.done = []       # when_done() of every accepted offer
        self._decisions = []  # our answer to each offer: fires once it is out
        self._announced = None  # how many offers the peer's session-totals said
        self._totals_came = []  # waiting for those totals (answered())
        self._all_came = []  # waiting for the announced offers (answered())
        self.failures = []   # an exception per offer that did not complete
        self._unsaid = []    # the first one's line, kept while it is the only offer
        self.offers = 0
        # what the offers received whole add up to, for the session's line
        # (the sender announces no total: offers come one at a time)
        self._received = {"offers": 0, "files": 0, "bytes": 0, "seconds": 0.0}
        self._total = None  # the session's SessionTotal, when the sender said its totals
        self._accepted = set()    # offers we accepted (their end is _report's)
        self._unanswered = set()  # offers that ended before our answer
        self._asking = {}         # offer -> the open question about it (cancellable)
        self._refused = set()     # offers we refused
        self._received_whole = set()  # accepted offers that completed
        self._kept_said = set()   # offers whose kept bytes were said
        trigger = getattr(reactor, "addSystemEventTrigger", None)
        if trigger is not None:
            # interrupted (Ctrl-C, SIGTERM): say what stays on disk
            trigger("after", "shutdown", self.say_kept)

    def totals(self, offers, nbytes):
        """The sender's "session-totals" (before its first offer): with
        more than one offer coming, a session bar above each offer's, as
        the sender shows it. Totals that come after an offer, or a second
        time, are ignored (the bars are placed already)."""
        if self._total is None and self.offers == 0 and offers > 1:
            self._total = SessionTotal(self._cfg, nbytes, clock=self._reactor.seconds)
        if self._announced is None:
            self._announced = offers
            waiting, self._totals_came = self._totals_came, []
            for came in waiting:
                came.callback(None)
            self._all_announced_came()

    def _close_total(self):
        if self._total is not None:
            self._total.close()

    def expect_offers(self, session):
        """``wormhole receive``: the sender offers at once, one offer after
        the other, then closes; a silence of ``--peer-timeout`` with no
        offer under way closes ``session`` (docs/security.md), and
        ``gave_up`` says why."""
        self._flow.expect_offers(session)

    @property
    def gave_up(self):
        """The PeerTimeout that ended the session (the sender offered
        nothing more), or None."""
        return self._flow.silence_error()

    def stop_waiting(self):
        """The session is over: no more offers to wait for."""
        self._close_total()
        self._flow.session_over()

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
        received 6.0 MB in 1.20 s (5.0 MB/s) via PATH", the time the
        offers received took, each from its first byte to its end: not
        the time between them, when the human was asked or the sender
        prepared the next."""
        got = self._received
        return (f"Session: {got['offers']} of {self.offers} offers received "
                f"({got['files']} file{'s' if got['files'] != 1 else ''}); "
                + summary("received", got["bytes"], got["seconds"],
                           self._path.description))

    def _count_received(self, result, meter):
        got = self._received
        got["offers"] += 1
        got["files"] += result.files
        got["bytes"] += meter.moved
        got["seconds"] += meter.seconds()

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

    def _target(self, number):
        """(folder, name or None) for the ``number``th offer (from 1): -o
        names the first one only, unless it is a folder."""
        out = self._cfg.output_file
        if out and os.path.isdir(os.path.join(self.cwd, out)):
            return os.path.join(self.cwd, out), None
        if out and number == 1:
            full = os.path.abspath(os.path.join(self.cwd, out))
            return os.path.dirname(full), os.path.basename(full)
        return self.cwd, None

    def on_offer(self, incoming):
        self.offers += 1
        if self.offers > 1:
            self._say_unsaid()
        self._flow.offer_came(incoming)
        incoming.when_done().addBoth(self._offer_ended, incoming)
        self._decisions.append(self._questions.run(self._decide, incoming, self.offers).addErrback(
            lambda f: incoming.reject(f"the receiver failed: {f.getErrorMessage()}")))
        self._all_announced_came()

    @defer.inlineCallbacks
    def answered(self, totals_coming=False):
        """Fires once every offer the peer announced (its session-totals;
        with ``totals_coming``, once they came, within TOTALS_WAIT seconds)
        has come and every offer that came has had our answer (an
        accepted one: its transfer started, not finished). Without
        totals, the offers that came so far."""
        if totals_coming and self._announced is None:
            came = defer.Deferred()
            self._totals_came.append(came)
            # a peer that declared the feature and says nothing (an older
            # release of ours in share without paths): not waited for long
            came.addTimeout(TOTALS_WAIT, self._reactor, onTimeoutCancel=lambda *_: None)
            yield came
        if self._announced is not None and self.offers < self._announced:
            came = defer.Deferred()
            self._all_came.append(came)
            yield came
        yield defer.DeferredList(list(self._decisions))

    def _all_announced_came(self):
        # called once an offer's decision is under way (answered() waits
        # for it next), or when the totals come
        if self._announced is not None and self.offers >= self._announced:
            waiting, self._all_came = self._all_came, []
            for came in waiting:
                came.callback(None)

    def refused(self, error):
        """The session's ``on_refused``: an offer the library refused
        before it was known (a record over the limits, a malformed offer,
        a protocol error) counts as an offer that failed (exit 1), said as
        any other offer's failure."""
        self.offers += 1
        if self.offers > 1:
            self._say_unsaid()
        self._failed(error, "Refused")
        self._all_announced_came()

    def _offer_ended(self, result, incoming):
        self._flow.offer_over(incoming)
        if incoming in self._accepted or incoming in self._refused:
            return  # said by _report, or by _refuse
        # the sender gave up (or went away) while we had not answered yet:
        # nothing was transferred, the command must not exit 0
        # (docs/cli.md, "Exit status")
        self._unanswered.add(incoming)
        why = (result.getErrorMessage() if isinstance(result, Failure)
               else getattr(result, "reason", result))
        self._failed(TransferError(f"the offer ended before we answered ({why})"), "Failed")
        if incoming in self._asking:
            # the question about it is over too: the human's next line
            # answers the next question (ui.prompt.WaitingQuestions)
            self._asking[incoming].cancel()

    @defer.inlineCallbacks
    def _decide(self, incoming, number):
        cfg = self._cfg
        if incoming in self._unanswered:
            return  # over before its turn to be asked about
        if cfg.only_text:
            # the peer hears what classic receive says in this case
            self._refuse(incoming, "transfer rejected",
                         "--only-text accepts only text messages")
            return
        if incoming.is_stream:
            # a stream has no file to go to: standard output, when asked
            self._refuse(incoming, "transfer rejected",
                         "the sender offers a stream: receive it with --stdout (or -o -)")
            return
        folder, name = self._target(number)
        offered = incoming.offer.base if incoming.is_directory else incoming.offer.filename
        try:
            target = target_path(folder, offered, name)
            # the receiving rules before any question: nothing existing is
            # replaced, and the sender hears why (docs/cli.md "Messages")
            check_not_existing(target, os.path.relpath(target, folder))
        except BadOffer:
            target = None  # an unusable name: accept() refuses it, as before
        except Refused as e:
            self._refuse(incoming, str(e))
            return
        say(cfg, f"Offered {describe(incoming.offer, incoming.is_directory)}"
                 f"{self._where(folder, name, target)}")
        if not cfg.accept_file:
            # no bar draws until the answer (ui.screen, through ui.prompt)
            asked = self._asking[incoming] = self._ask(self._reactor, cfg, "ok? (Y/n): ")
            try:
                answer = yield asked
            except (EOFError, defer.CancelledError):
                answer = "n"  # end of input, or given up (_offer_ended)
            finally:
                del self._asking[incoming]
            if incoming in self._unanswered:
                return  # over while the human decided: said already
            if answer.strip().lower() not in ("", "y", "yes"):
                self._refuse(incoming, "transfer rejected")
                return
        self._accepted.add(incoming)
        d = incoming.when_done()
        self.done.append(d)
        # fires once our answer is out (a resume's kept bytes checked)
        yield incoming.accept(folder, name, peer_reason="transfer rejected")
        if incoming.refused:
            # our rules refused it: a malformed offer (an unusable name) is
            # a failure (exit 1) as in classic receive; it would overwrite,
            # no room: declined (exit 3)
            bad = isinstance(incoming.refusal, BadOffer)
            self._failed(incoming.refusal if bad else Declined(incoming.refused), "Refused")
            return
        said = incoming.discarded
        if said:
            say(cfg, said)
        if incoming.resumed_from:
            say(cfg, f"Resuming at byte {incoming.resumed_from} of {incoming.size} (the bytes "
                     "an interrupted transfer left)")
        total = self._total.bar if self._total is not None else None
        meter = OfferProgress(self._reactor, cfg, self._path, ("Receiving", "Received"),
                              incoming.size, "receive", total=total,
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

    def _where(self, folder, name, target):
        """What the question adds to the offer's line: where the data goes
        when -o chose it, and the bytes an interrupted receive kept that
        an accept resumes from."""
        if target is None:
            return ""
        where = ""
        if name is not None or folder != self.cwd:
            where = f" into '{escape_text(os.path.relpath(target, self.cwd))}'"
        kept = kept_for(target)
        if kept is not None and kept.nbytes:
            where += (f", resuming after the {naturalsize(kept.nbytes)} an interrupted "
                      "receive kept")
        return where

    def _refuse(self, incoming, reason, why=None):
        # like classic receive, a refused offer makes the command fail
        # (declined: exit 3)
        self._refused.add(incoming)
        incoming.reject(reason)
        self._failed(Declined(why or reason), "Refused")

    def expire_kept(self):
        """The bound on what interrupted receives keep (``_kept``): kept
        partials in our folder untouched for MAX_AGE_DAYS are removed now."""
        for kept in expire(self._target(1)[0], time.time()):
            say(self._cfg, f"Removed {naturalsize(kept.nbytes)} kept by an interrupted receive "
                           f"more than {MAX_AGE_DAYS} days ago: "
                           f"{escape_text(kept.names[0])}")

    def peer_stopped(self, error):
        """The error the sender's mailbox ``error`` ends the command with
        (``_stream_receive`` adds what a cut stream wrote)."""
        return error

    def say_kept(self):
        """For each accepted offer that did not complete: the one line
        saying what it keeps on disk, where, and how to resume or drop it."""
        for incoming in self._accepted - self._received_whole - self._kept_said:
            self._kept_said.add(incoming)
            # a sink that kept nothing (refused, not resumable) has no target
            target = getattr(getattr(incoming, "sink", None), "final_path", None)
            kept = kept_for(target) if target else None
            if kept is not None:
                say(self._cfg, _kept.kept_line(kept, describe(incoming.offer,
                                                              incoming.is_directory)))

    def _report(self, result, meter, incoming, said):
        meter.close()
        if isinstance(result, T.Received):
            self._received_whole.add(incoming)
        else:
            self.say_kept()
        cfg = self._cfg
        if incoming.discarded and incoming.discarded != said:  # from the sender's answer
            say(cfg, incoming.discarded)
        if isinstance(result, T.Received):
            self._count_received(result, meter)
            say(cfg, written_to(incoming.is_directory, result.path))
            say(cfg, meter.summary())
        elif isinstance(result, T.Rejected):
            if not incoming.refused:  # else said already, with the local reason
                self._failed(TransferError(f"not received: {result.reason}"), "Failed")
        else:
            self._failed(meter.lost("sender", result.value), "Failed")
