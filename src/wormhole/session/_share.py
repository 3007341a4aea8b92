"""Both sides offer and receive in one transfer-v2 session, as a library
(docs/api.md "Sessions", ``Share``): what ``wormhole share`` does. The
peer's offers go through the same receiving rules, policy and events as
``Transfer.receive``'s; ours are offered one at a time, those given at
the start and any the application adds while the session runs. The
session ends when the application ends it (``end()``: our offers done,
the peer's announced offers answered and the accepted ones arrived), or
when the peer does.

transfer-v2 only ("connect" mode, docs/transfer-v2.md "`wormhole share
[PATH]...` (the `connect` mode)"): a peer
without it, or without Dilation, is told so in the mailbox and the share
fails saying which command to use instead.
"""
import os
import time

from twisted.internet import defer
from twisted.python import failure

from .. import transfer
from .. import transfer_v2 as T
from .._eventual import EventualQueue
from .._inactivity import PeerTimeout, give_up_after
from .._observer import OneShotObserver
from ..errors import TransferError
from ..util import dict_to_bytes
from . import _events as E
from ._kept import expire
from ._outcome import outcome
from ._peer_error import PeerError
from ._transfer import V2, Transfer

# offers of ours waiting for the ones before them: a bound on what an
# application (a program writing share --json's offer lines) can pile up
MAX_WAITING_OFFERS = 1000

NOT_V2 = ("the peer does not speak transfer-v2, which 'wormhole share' needs: use "
          "'wormhole send' and 'wormhole receive'")
NO_DILATION = ("the peer announces transfer-v2 but cannot dilate, which 'wormhole share' "
               "needs: use 'wormhole send' and 'wormhole receive'")


def share_options():
    """``wormhole.create(..., **share_options())`` for a ``Share``."""
    return {"versions": T.app_versions("connect"), "dilation": True}


class Share(Transfer):
    """A share over ``w`` (created with ``share_options()``); the
    arguments are ``Transfer``'s. ``run(paths)`` fires with the list of
    ``Sent`` and ``Received`` events once the session is over, or fails;
    ``offer(path)`` adds an offer while it runs; ``end()`` asks for the
    end."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._session_v2 = None
        self._open = OneShotObserver(EventualQueue(self._reactor))
        self._ending = defer.Deferred()
        self._queue = defer.DeferredLock()  # our offers go one at a time
        self._ours = []      # per offer of ours: fires (with None) once it is over
        self._sent = []      # the Sent event of each offer of ours that completed
        self._unsent = []    # the error of each that did not
        self._announced = None  # how many offers the peer said it makes
        self._came = 0       # how many offers of the peer's came
        self._all_came = []  # Deferreds waiting for the announced offers

    # -- public ----------------------------------------------------------------
    def run(self, paths=()):
        # queued now: they go before any offer() made while the session opens
        paths = list(paths)
        for path in paths:
            self.offer(path).addErrback(lambda f: None)  # said as OfferFailed
        return self._run(self._share, paths)

    def when_open(self):
        """Fires once the session is open (offers can be made), or fails
        as ``run()`` does."""
        return self._open.when_fired()

    def offer(self, path):
        """Offer ``path`` once the offers before it are done; fires with
        its ``Sent`` event, or fails (then ``OfferFailed`` said why: the
        session goes on). At most MAX_WAITING_OFFERS wait at once."""
        if len(self._queue.waiting) >= MAX_WAITING_OFFERS:
            name = os.path.basename(os.path.abspath(path))
            error = TransferError(f"not offering {name!r}: {MAX_WAITING_OFFERS} offers "
                                  "wait already")
            self._emit(E.OfferFailed(name, "error", str(error)))
            return defer.fail(error)
        d = self._queue.run(self._offer_one, path)
        over = defer.Deferred()
        d.addBoth(lambda result: (over.callback(None), result)[1])
        self._ours.append(over)
        return d

    def end(self):
        """End the session once our offers are done and the peer's
        announced offers have come, been answered and (accepted ones)
        arrived, bounded by ``peer_timeout``. ``run()`` fires after."""
        if not self._ending.called:
            self._ending.callback(None)

    # -- the session -----------------------------------------------------------
    @defer.inlineCallbacks
    def _share(self, paths):
        try:
            session = yield self._start()
            # our totals before our first offer (0: a peer that ends the
            # session waits for them)
            outgoings = [T.prepare_offer(p) for p in paths]
            session.announce_totals(len(outgoings), sum(o.size for o in outgoings))
        except Exception as e:
            self._open.error(failure.Failure(e))
            raise
        self._open.fire(None)
        closed = session.when_closed()
        yield self._peer.unless_error(defer.DeferredList([self._ending, closed],
                                                         fireOnOneCallback=True))
        if not closed.called:
            # the peer's announced offers come and get their answers, ours
            # finish, the accepted ones arrive: bounded by peer_timeout
            settled = give_up_after(self._settled(session), self._reactor, self._peer_timeout,
                                    "the peer's announced offers")
            settled.addErrback(lambda f: f.trap(PeerTimeout))
            yield self._peer.unless_error(defer.DeferredList([settled, closed],
                                                             fireOnOneCallback=True))
        yield self._peer.unless_error(session.close())
        return (yield self._results())

    @defer.inlineCallbacks
    def _start(self):
        versions = yield self._w.get_versions()
        if not T.speaks_transfer_v2(versions):
            self._w.send_message(dict_to_bytes({"error": NOT_V2}))
            raise TransferError(NOT_V2)
        session = self._session("connect", self._first_connection(), on_offer=self._came_in,
                                on_totals=self._totals, on_refused=self._refused_one)
        if not (yield self._opened(session)):
            self._w.send_message(dict_to_bytes({"error": NO_DILATION}))
            raise TransferError(NO_DILATION)
        self._emit(E.ProtocolChosen(V2))
        expire(self._folder, time.time())
        self._peer = PeerError.watching(self._w, session, "peer")
        self._session_v2 = session
        return session

    def _refused_one(self, error):
        # an offer of the peer's, though refused before it was known
        self._came += 1
        self._refused_unknown(error)
        self._maybe_all_came()

    def _totals(self, offers, nbytes):
        self._emit(E.Totals(offers, nbytes))
        if self._announced is None:
            self._announced = offers
            self._maybe_all_came()

    def _came_in(self, incoming):
        self._came += 1
        self._offered(incoming)
        self._maybe_all_came()

    def _maybe_all_came(self):
        if self._announced is not None and self._came >= self._announced:
            waiting, self._all_came = self._all_came, []
            for d in waiting:
                d.callback(None)

    @defer.inlineCallbacks
    def _settled(self, session):
        if session.totals_agreed:
            # the peer says its totals before its first offer (docs/transfer-v2.md
            # "Session totals: the `session-totals` feature (a proposal others
            # can adopt)"): wait for those offers
            came = defer.Deferred()
            self._all_came.append(came)
            self._maybe_all_came()
            yield came
        yield defer.DeferredList(list(self._ours))
        yield defer.DeferredList(list(self._arrivals))

    @defer.inlineCallbacks
    def _offer_one(self, path):
        yield self.when_open()
        session = self._session_v2
        name = os.path.basename(os.path.abspath(path))
        if not session.negotiated.we_may_offer:
            error = TransferError(f"not offering {name!r}: the peer is in "
                                  f"{session.negotiated.their_mode!r} mode")
            self._emit(E.OfferFailed(name, "error", str(error)))
            raise error
        try:
            sent = yield self._offer_v2(session, path, T.prepare_offer(path))
        except Exception as e:
            self._unsent.append(e)
            kind = "declined" if isinstance(e, transfer.Declined) else "error"
            self._emit(E.OfferFailed(name, kind, str(e)))
            raise
        self._sent.append(sent)
        return sent

    @defer.inlineCallbacks
    def _results(self):
        if self._peer.error is not None:
            raise self._peer.error
        yield defer.DeferredList(list(self._ours))
        theirs = yield defer.DeferredList(list(self._arrivals), consumeErrors=True)
        results, failures = list(self._sent), self._unsent + self._refusals
        failures += [transfer.Declined(f"declined {name!r}") for name in self._declined]
        for ok, value in theirs:
            if not ok:
                failures.append(value.value)
            elif value is not None:
                results.append(value)
        error = outcome(failures, len(self._ours) + self._came, "offers")
        if error is not None:
            raise error
        return results

