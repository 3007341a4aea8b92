"""``wormhole send``: the sender of spec 004 chapter 9 (9.1): a text
through the mailbox, or a file or directory through Transit (9.3).

What goes where was settled by running the reference 0.24 (docs/cli.md):
progress and instructions on stderr; on stdout only what a script may
read -- the "Text to send: " prompt, the verifier question, and the note
that the code was consumed.
"""
import os

from twisted.internet import defer

from .. import transfer
from .._shutdown import OnShutdown
from .._status import ConsumedCode
from ..errors import TransferError
from . import _qr, _transfer_v2
from ._common import ask, make_transit, make_wormhole, run_and_close
from ._display import escape_text, naturalsize
from ._progress import ClassicTransferBar, summary
from ._uri import transfer_uri

CONSUMED_NOTE = "Note: code has been consumed and can no longer be used."


class _ConsumedNote:
    """Prints CONSUMED_NOTE on stdout once, when the status says the
    nameplate was released (the peer arrived: nobody else can use it)."""

    def __init__(self, stdout):
        self._stdout = stdout
        self._printed = False

    def status_update(self, status):
        if isinstance(status.code, ConsumedCode) and not self._printed:
            self._printed = True
            print(CONSUMED_NOTE, file=self._stdout, flush=True)


@defer.inlineCallbacks
def _get_text(reactor, cfg):
    if cfg.text == "-":
        print("Reading text message from stdin..", file=cfg.stderr)
        return cfg.stdin.read()
    if cfg.text is not None:
        return cfg.text
    # neither WHAT nor --text: ask (the reference prompts on stdout)
    try:
        text = yield ask(reactor, cfg, "Text to send: ")
    except EOFError:
        raise TransferError("no text to send: standard input ended before a line was read")
    return text


def _instructions(cfg, code):
    """What the sender tells its human to tell the other one (stderr)."""
    lines = []
    if not cfg.zeromode:
        lines.append(f"Wormhole code is: {code}")
    lines.append("On the other computer, please run:")
    lines.append("")
    args = ["wormhole", "receive"]
    if cfg.verify:
        args.append("--verify")
    args.append("-0" if cfg.zeromode else code)
    lines.append(" ".join(args))
    lines.append("")
    return "\n".join(lines)


@defer.inlineCallbacks
def send(reactor, cfg):
    """Send ``cfg.what`` (a file or directory), or ``cfg.text`` (or stdin,
    or a prompted line) to the peer."""
    if cfg.what is not None and cfg.text is None:
        if cfg.classic:
            yield send_path(reactor, cfg)
        else:  # transfer-v2 when the peer has it, else this classic path
            yield _transfer_v2.send_paths(reactor, cfg)
        return
    text = yield _get_text(reactor, cfg)
    print(f"Sending text message ({naturalsize(len(text))})", file=cfg.stderr)
    if cfg.classic:
        note = _ConsumedNote(cfg.stdout)
        w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)
        completed = yield run_and_close(reactor, w, lambda: _send_on(reactor, cfg, w, text))
    else:  # transfer-v2's text message when the peer has it, else classic
        completed = yield _transfer_v2.send_text(reactor, cfg, text)
    if completed:
        print(_transfer_v2.TEXT_SENT, file=cfg.stderr)


@defer.inlineCallbacks
def _announce_code(cfg, w):
    if cfg.zeromode:
        w.set_code("0-")
    elif cfg.code:
        w.set_code(cfg.code)
    else:
        w.allocate_code(cfg.code_length)
    code = yield w.get_code()
    print(_instructions(cfg, code), file=cfg.stderr, flush=True)
    if cfg.qr and not cfg.zeromode:
        _qr.draw(transfer_uri(code, cfg.relay_url), cfg.stderr)


def _verify(reactor, cfg):
    """With --verify: the library's ``verify``, asking the human whether
    the verifier matches (None without: no question)."""
    if not cfg.verify:
        return None

    @defer.inlineCallbacks
    def verify(verifier):
        answer = yield ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
        return answer.strip().lower() in ("yes", "y")
    return verify


@defer.inlineCallbacks
def _verified(reactor, cfg, w):
    """With --verify: whether the human accepts the verifier (asked by
    transfer-v2 before its session, cli/_transfer_v2.py)."""
    verify = _verify(reactor, cfg)
    if verify is None:
        return True
    return (yield verify((yield w.get_verifier())))


@defer.inlineCallbacks
def _send_on(reactor, cfg, w, text):
    yield _announce_code(cfg, w)
    yield send_text_on(reactor, cfg, w, text)


def send_text_on(reactor, cfg, w, text):
    """The classic text offer (spec 9.1) on ``w``, whose code was announced."""
    return transfer.send_text(w, text, verify=_verify(reactor, cfg))


# -- files and directories (spec 004 9.1, 9.3) --------------------------------
@defer.inlineCallbacks
def send_path(reactor, cfg, w=None):
    """Offer the file or directory ``cfg.what``; stream it over Transit.
    ``w``: a wormhole whose code was already announced (the classic
    fallback of ``_transfer_v2.send_paths``, which also closes it)."""
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
        print(transfer.describe(outgoing), file=cfg.stderr, flush=True)
        # made now: a bad --transit-helper fails before a code is allocated
        transit = make_transit(cfg.transit_sender, reactor, cfg)
        if w is not None:
            yield _offer_path(reactor, cfg, w, outgoing, transit)
            return
        note = _ConsumedNote(cfg.stdout)
        w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)
        yield run_and_close(
            reactor, w, lambda: _send_path_on(reactor, cfg, w, outgoing, transit))
    finally:
        on_shutdown.cancel()
        outgoing.cleanup()


@defer.inlineCallbacks
def _send_path_on(reactor, cfg, w, outgoing, transit):
    yield _announce_code(cfg, w)
    yield _offer_path(reactor, cfg, w, outgoing, transit)


@defer.inlineCallbacks
def _offer_path(reactor, cfg, w, outgoing, transit):
    bar = ClassicTransferBar(cfg, "Sending", outgoing.size)

    def sent(grown):
        bar.close()
        if grown:
            print(f"Warning: {grown}", file=cfg.stderr, flush=True)
        print("File sent.. waiting for confirmation", file=cfg.stderr, flush=True)
    try:
        result = yield transfer.send_file(
            reactor, w, cfg.appid, outgoing, transit, verify=_verify(reactor, cfg),
            connected=bar.connected, progress=bar.progress, sent=sent, timing=cfg.timing)
    finally:
        bar.close()
    print("Confirmation received. Transfer complete.", file=cfg.stderr, flush=True)
    print(summary("Sent", result.size, result.seconds, escape_text(result.via)),
          file=cfg.stderr, flush=True)
