"""The classic recipient (File-transfer protocol, "Recipient";
File-transfer protocol, "Transit") as ``wormhole receive`` runs it on a
wormhole whose key is confirmed: a text is printed; a file or directory is
checked, accepted by the human (or ``--accept-file``) and received over
Transit. The protocol and the receiving rules are the
``wormhole.transfer`` library's (with ``wormhole._landing``); here are the
human's parts: the words on stderr, the bar, the question."""
import os

from twisted.internet import defer

from .. import transfer
from ..session import PeerError, escape_text, give_up_after, naturalsize
from ._common import make_transit
from ._interrupt import CancelOnStop
from .ui.progress import PEER_TIMEOUT_HINT, ClassicTransferBar, summary
from .ui.prompt import ask
from .ui.wording import count, received_text


@defer.inlineCallbacks
def receive_classic(reactor, cfg, w, first=None, protocol_note=None):
    """Read the sender's offer (``first``: its first message, when a
    transfer-v2 session read it already) and receive what it offers;
    ``protocol_note`` is printed before a file or directory offer is
    described (which protocol carries it)."""
    bar = ClassicTransferBar(cfg, "Receiving", 0)

    def unpacking():
        bar.close()
        print("Unpacking zipfile..", file=cfg.stderr, flush=True)
    policy = transfer.ReceivePolicy(
        folder=cfg.cwd or os.getcwd(), output=cfg.output_file,
        accept=lambda offer: _ask_human(reactor, cfg, w, offer, bar, protocol_note),
        only_text=cfg.only_text and "--only-text accepts only text messages",
        free_space=cfg.free_space,
        peer_timeout=cfg.peer_timeout, timeout_hint=PEER_TIMEOUT_HINT)
    # Ctrl-C mid-file: the sender hears "cancelled" over Transit
    cancellation = transfer.Cancellation()
    on_stop = CancelOnStop(reactor, cancellation, cfg.interruption)
    try:
        got = yield transfer.receive(
            reactor, w, cfg.appid, policy,
            transit=lambda: make_transit(cfg.transit_receiver, reactor, cfg),
            first_message=first, connected=bar.connected, progress=bar.progress,
            unpacking=unpacking, timing=cfg.timing, cancellation=cancellation)
    finally:
        on_stop.remove()
        bar.close()
    if got.kind == "text":
        print(received_text(got.text), file=cfg.stdout, flush=True)
        return
    what = "file" if got.kind == "file" else "files"
    print(f"Received {what} written to: {escape_text(got.path)}", file=cfg.stderr,
          flush=True)
    print(summary("Received", got.size, got.seconds, escape_text(got.via)),
          file=cfg.stderr, flush=True)


def from_sender(reactor, cfg, d, what):
    """``d``, given up after ``--peer-timeout`` seconds of silence."""
    return give_up_after(d, reactor, cfg.peer_timeout, what, PEER_TIMEOUT_HINT)


@defer.inlineCallbacks
def _ask_human(reactor, cfg, w, offer, bar, protocol_note):
    """The policy's ``accept``: say what is offered and where it goes, and
    ask (unless --accept-file). The sender sends nothing more until our
    answer, unless it stops on purpose: its ``error`` ends the question
    (``PeerError``)."""
    if protocol_note is not None:
        print(protocol_note, file=cfg.stderr, flush=True)
    if cfg.output_file == "-":
        # --stdout takes a stream, which the classic protocol cannot carry
        # (docs/cli.md "Streams"): nothing named "-" is written
        print(f"--stdout (-o -) takes a stream (wormhole send -): refusing the {offer.kind} "
              "the classic protocol offers", file=cfg.stderr, flush=True)
        return False
    cwd = cfg.cwd or os.getcwd()
    target = offer.target
    shown = os.path.relpath(target, cwd) if target.startswith(cwd + os.sep) else target
    shown = escape_text(shown)  # the name came from the peer
    size = naturalsize(offer.size)
    if offer.kind == "file":
        print(f"Receiving file ({size}) into: '{shown}'", file=cfg.stderr, flush=True)
    else:
        print(f"Receiving directory ({size}) into: '{shown}'/\n"
              f"{count(offer.numfiles, 'file')}, {naturalsize(offer.unpacked)} (uncompressed)",
              file=cfg.stderr, flush=True)
    bar.size = offer.size
    if cfg.accept_file:
        return True
    sender = PeerError.watching(w, None, "sender")
    try:
        answer = yield sender.unless_error(ask(reactor, cfg, "ok? (Y/n): "))
    except EOFError:
        answer = "n"
    return answer.strip().lower() in ("", "y", "yes")
