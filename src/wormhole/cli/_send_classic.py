"""The classic sender (File-transfer protocol, "Sender";
File-transfer protocol, "Transit") as ``wormhole send`` runs it: a text
through the mailbox, a file or directory through Transit, each on a
wormhole whose code was announced (``--classic``, or the peer without
transfer-v2). The protocol is the ``wormhole.transfer`` library's; here
are the human's parts: the words on stderr, the bar, the questions."""
import os

from twisted.internet import defer

from .. import OnShutdown, transfer
from ..errors import TransferError
from ..session import escape_text
from ._announce import ConsumedNote, announce_code
from ._common import make_transit, make_wormhole, run_and_close
from ._interrupt import CancelOnStop
from .ui.progress import ClassicTransferBar, summary
from .ui.prompt import ask


def verify_question(reactor, cfg):
    """With --verify: the library's ``verify``, asking the human whether
    the verifier matches (None without: no question)."""
    if not cfg.verify:
        return None

    @defer.inlineCallbacks
    def verify(verifier):
        answer = yield ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
        return answer.strip().lower() in ("yes", "y")
    return verify


def send_text_on(reactor, cfg, w, text):
    """The classic text offer (File-transfer protocol, "Sender") on ``w``,
    whose code was announced."""
    return transfer.send_text(w, text, verify=verify_question(reactor, cfg))


@defer.inlineCallbacks
def send_path(reactor, cfg, w=None):
    """Offer the file or directory ``cfg.what``; stream it over Transit.
    ``w``: a wormhole whose code was already announced (the classic
    fallback of a transfer-v2 send, which also closes it and has said
    what it sends)."""
    def warn(message):
        print(f"Warning: {message}", file=cfg.stderr, flush=True)
    if os.path.isdir(cfg.what):
        print("Building zipfile..", file=cfg.stderr, flush=True)
    try:
        outgoing = transfer.prepare(cfg.what, cfg.ignore_unsendable_files, warn,
                                    tmpdir=cfg.tmpdir)
    except transfer.Unsendable as e:
        raise TransferError(f"{e} (use --ignore-unsendable-files to skip what cannot "
                            "be sent)") from None
    # a directory's temporary zipfile goes on every path, Ctrl-C included
    on_shutdown = OnShutdown(reactor, outgoing.cleanup)
    try:
        if w is None:  # else our caller said what it sends, before the code
            print(transfer.describe(outgoing), file=cfg.stderr, flush=True)
        # made now: a bad --transit-helper fails before a code is allocated
        transit = make_transit(cfg.transit_sender, reactor, cfg)
        if w is not None:
            yield _offer_path(reactor, cfg, w, outgoing, transit)
            return
        note = ConsumedNote(cfg.stdout)
        w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)
        yield run_and_close(
            reactor, cfg, w, lambda: _send_path_on(reactor, cfg, w, outgoing, transit))
    finally:
        on_shutdown.cancel()
        outgoing.cleanup()


@defer.inlineCallbacks
def _send_path_on(reactor, cfg, w, outgoing, transit):
    yield announce_code(cfg, w)
    yield _offer_path(reactor, cfg, w, outgoing, transit)


@defer.inlineCallbacks
def _offer_path(reactor, cfg, w, outgoing, transit):
    bar = ClassicTransferBar(cfg, "Sending", outgoing.size)

    def sent(grown):
        bar.close()
        if grown:
            print(f"Warning: {grown}", file=cfg.stderr, flush=True)
        print("File sent.. waiting for confirmation", file=cfg.stderr, flush=True)
    # Ctrl-C mid-file: the receiver hears "cancelled" over Transit
    cancellation = transfer.Cancellation()
    on_stop = CancelOnStop(reactor, cancellation, cfg.interruption)
    try:
        result = yield transfer.send_file(
            reactor, w, cfg.appid, outgoing, transit, verify=verify_question(reactor, cfg),
            connected=bar.connected, progress=bar.progress, sent=sent, timing=cfg.timing,
            cancellation=cancellation)
    finally:
        on_stop.remove()
        bar.close()
    print("Confirmation received. Transfer complete.", file=cfg.stderr, flush=True)
    print(summary("Sent", result.size, result.seconds, escape_text(result.via)),
          file=cfg.stderr, flush=True)
