"""The classic sender (spec 004 9.1, 9.3) as ``wormhole send`` runs it:
a text through the mailbox, a file or directory through Transit, each on
a wormhole whose code was announced (``--classic``, or the peer without
transfer-v2)."""
import os

from twisted.internet import defer

from . import _outgoing, _transfer
from ._announce import ConsumedNote, announce_code, verified
from ._common import OnShutdown, close_early, make_wormhole, run_and_close
from ._offer import file_sender, text_sender


@defer.inlineCallbacks
def send_text_on(reactor, cfg, w, text):
    """The classic text offer (spec 9.1) on ``w``, whose code was announced."""
    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)
    sender = text_sender(w.send_message, done)

    if not (yield verified(reactor, cfg, w)):
        sender.reject_verification()
    if not finished.called:
        sender.send_offer({"message": text})
    yield until_finished(w, sender, finished)


@defer.inlineCallbacks
def until_finished(w, sender, finished):
    """Give the peer's mailbox messages to ``sender`` (an ``OfferSender``)
    until ``finished`` fires with its outcome; fails with its error."""
    while not finished.called:
        body = yield w.get_message()
        sender.got_message(body)
    error = yield finished
    if error is not None:
        raise error


@defer.inlineCallbacks
def send_path(reactor, cfg, w=None):
    """Offer the file or directory ``cfg.what``; stream it over Transit.
    ``w``: a wormhole whose code was already announced (the classic
    fallback of a transfer-v2 send, which also closes it)."""
    def warn(message):
        print(f"Warning: {message}", file=cfg.stderr, flush=True)
    if os.path.isdir(cfg.what):
        print("Building zipfile..", file=cfg.stderr, flush=True)
    outgoing = _outgoing.prepare(cfg.what, cfg.ignore_unsendable_files, warn,
                                 tmpdir=cfg.tmpdir)
    # a directory's temporary zipfile goes on every path, Ctrl-C included
    on_shutdown = OnShutdown(reactor, outgoing.cleanup)
    try:
        print(_outgoing.describe(outgoing), file=cfg.stderr, flush=True)
        # made now: a bad --transit-helper fails before a code is allocated
        transit = _transfer.make_transit(cfg.transit_sender, reactor, cfg)
        if w is not None:
            yield _offer_path(reactor, cfg, w, outgoing, transit)
            return
        note = ConsumedNote(cfg.stdout)
        w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)
        yield run_and_close(
            reactor, w, lambda: _send_path_on(reactor, cfg, w, outgoing, transit))
    finally:
        on_shutdown.cancel()
        outgoing.cleanup()


@defer.inlineCallbacks
def _send_path_on(reactor, cfg, w, outgoing, transit):
    yield announce_code(cfg, w)
    yield _offer_path(reactor, cfg, w, outgoing, transit)


@defer.inlineCallbacks
def _offer_path(reactor, cfg, w, outgoing, transit):
    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)
    sender = file_sender(w.send_message, transit.add_connection_hints, done)
    if not (yield verified(reactor, cfg, w)):
        sender.reject_verification()
    else:
        ours = yield _transfer.transit_message(transit)
        sender.send_offer(outgoing.offer, ours)
    yield until_finished(w, sender, finished)
    transit.set_transit_key(_transfer.transit_key(w, cfg.appid))
    close_early(w)  # the file_ack was the last mailbox message (spec 9.3)
    pipe = yield transit.connect()
    try:
        print(_transfer.path_line("Sending", pipe.describe()), file=cfg.stderr, flush=True)
        progress = _transfer.progress_bar(cfg, outgoing.size)
        timed = cfg.timing.add("transfer", bytes=outgoing.size)  # docs/timing.md
        started = reactor.seconds()
        with outgoing.open() as f, progress:
            digest = yield _transfer.send_file(pipe, f, progress, outgoing.size,
                                               clock=reactor)
            grown = _outgoing.grown(f, outgoing)
        if grown:
            print(f"Warning: {grown}", file=cfg.stderr, flush=True)
        print("File sent.. waiting for confirmation", file=cfg.stderr, flush=True)
        yield _transfer.wait_for_ack(pipe, digest, clock=reactor, size=outgoing.size)
        timed.finish()
    except BaseException:
        pipe.close()
        raise
    print("Confirmation received. Transfer complete.", file=cfg.stderr, flush=True)
    print(_transfer.summary("Sent", outgoing.size, reactor.seconds() - started,
                            pipe.describe()), file=cfg.stderr, flush=True)
    yield pipe.close()
