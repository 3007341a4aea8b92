"""``wormhole send PATH...``: transfer-v2 offers, one after the other on
one session, when the peer has transfer-v2; the classic protocol (one path
per code) otherwise (docs/transfer-v2.md "The CLI")."""
import os
import stat

from twisted.internet import defer

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import escape_text, outcome, rejected
from ..util import dict_to_bytes
from ._send_classic import send_path
from ._sending import send_v2_or_classic
from ._v2_session import check_transit_helper
from .ui.progress import OfferProgress, SessionTotal
from .ui.screen import say
from .ui.wording import NOT_A_FILE, count, describe, sending_paths


def _paths(cfg):
    return tuple(cfg.paths) or (cfg.what,)


def prepare_all(cfg, skip_unsendable=True, paths=None):
    """transfer-v2 offers for every path (fails before a code is used).
    What a directory holds that cannot be sent is skipped with a warning,
    or, unless ``skip_unsendable``, stops the send naming it (``wormhole
    send`` without --ignore-unsendable-files, as its classic sender does;
    docs/cli.md "What a directory's zipfile holds"). ``paths``: these
    instead of the command's."""
    outgoings = [T.prepare_offer(p) for p in (paths or _paths(cfg))]
    for outgoing in outgoings:
        for path, why in outgoing.skipped:
            if not skip_unsendable:
                raise TransferError(f"Cannot send {escape_text(path)}: {why} (use "
                                    "--ignore-unsendable-files to skip what cannot be sent)")
            say(cfg, f"Warning: {escape_text(path)}: {why} (skipped)")
    return outgoings


def _not_a_file(path):
    """Whether ``path`` is something transfer-v2 does not send but classic
    does: a block device, read as a file of its size (the reference's habit)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # prepare_offer says what is wrong
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@defer.inlineCallbacks
def send_paths(reactor, cfg):
    """Send ``cfg.paths`` (or ``cfg.what``): transfer-v2 when the peer has
    it, classic otherwise (one path only)."""
    paths = _paths(cfg)
    if len(paths) == 1 and _not_a_file(paths[0]):
        say(cfg, NOT_A_FILE.format(escape_text(paths[0])))
        yield send_path(reactor, cfg)
        return
    outgoings = prepare_all(cfg, cfg.ignore_unsendable_files)
    check_transit_helper(cfg)
    # what is sent, said once and before the code as the reference does;
    # the classic fallback (send_path on our wormhole) does not say it again
    say(cfg, sending_paths(outgoings))

    @defer.inlineCallbacks
    def over_v2(session, path):
        try:
            failures = yield offer_all(reactor, cfg, session, outgoings, path)
        finally:
            yield session.close()
        error = outcome(failures, len(outgoings), "offers")
        if error is not None:
            raise error
        say(cfg, "Transfer complete.")

    def one_path_for_classic(w, reason):
        # the classic protocol sends one file or directory per code: with
        # several, tell the waiting classic receiver we gave up
        # (File-transfer protocol, "Sender")
        if len(outgoings) != 1:
            why = (f"{reason}, which sends one file or directory per code; {len(outgoings)} "
                   "were given (send a folder holding them, or one at a time)")
            w.send_message(dict_to_bytes({"error": why}))
            raise TransferError(why)
    yield send_v2_or_classic(reactor, cfg, classic=lambda cfg, w: send_path(reactor, cfg, w),
                             over_v2=over_v2, refuse_classic=one_path_for_classic)


@defer.inlineCallbacks
def offer_all(reactor, cfg, session, outgoings, path):
    """Offer each Outgoing in turn, with progress; fires with the errors
    of those that did not complete (rejected ones included). With one
    offer, its error is left to the caller to say (the ERROR line)."""
    failures = []
    several = len(outgoings) > 1
    # a session bar above each offer's when there is more than one; the
    # receiver gets the totals for its own (a peer with "session-totals")
    size = sum(o.size for o in outgoings)
    total = SessionTotal(cfg, size, several)
    session.announce_totals(len(outgoings), size)

    def failed(error, label):
        failures.append(error)
        if several:
            say(cfg, f"{label}: {escape_text(error)}")
    try:
        for o in outgoings:
            said = describe(o.offer, o.is_directory)
            say(cfg, f"Offering {said}")
            meter = OfferProgress(reactor, cfg, path, ("Sending", "Sent"), o.size, "offer",
                                  total.bar)
            timed = cfg.timing.add("transfer", bytes=o.size)  # docs/timing.md
            try:
                result = yield session.offer_prepared(o, meter.update, meter.file_started,
                                                      resumed=meter.follow)
            except T.OfferRejected as e:
                failed(rejected(e.reason), "Rejected")
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
            say(cfg, f"Sent {said}: {count(result.files, 'file')} confirmed{resumed}")
            say(cfg, meter.summary())
    finally:
        total.close()
    return failures
