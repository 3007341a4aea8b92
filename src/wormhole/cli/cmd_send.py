"""``wormhole send``: the sender of spec 004 chapter 9 (9.1): a text
through the mailbox, or a file or directory through Transit (9.3).

What goes where was settled by running the reference 0.24 (docs/cli.md):
progress and instructions on stderr; on stdout only what a script may
read -- the "Text to send: " prompt, the verifier question, and the note
that the code was consumed.
"""
import os

from twisted.internet import defer

from .._status import ConsumedCode
from ..errors import TransferError
from . import _outgoing, _qr, _transfer, _transfer_v2
from ._common import OnShutdown, ask, close_early, make_wormhole, run_and_close
from ._display import naturalsize
from ._offer import file_sender, text_sender
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


@defer.inlineCallbacks
def _verified(reactor, cfg, w):
    """With --verify: whether the human accepts the verifier."""
    if not cfg.verify:
        return True
    verifier = yield w.get_verifier()
    answer = yield ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
    return answer.strip().lower() in ("yes", "y")


@defer.inlineCallbacks
def _send_on(reactor, cfg, w, text):
    yield _announce_code(cfg, w)
    yield send_text_on(reactor, cfg, w, text)


@defer.inlineCallbacks
def send_text_on(reactor, cfg, w, text):
    """The classic text offer (spec 9.1) on ``w``, whose code was announced."""
    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)
    sender = text_sender(w.send_message, done)

    if not (yield _verified(reactor, cfg, w)):
        sender.reject_verification()
    if not finished.called:
        sender.send_offer({"message": text})
    while not finished.called:
        body = yield w.get_message()
        sender.got_message(body)
    error = yield finished
    if error is not None:
        raise error


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
    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)
    sender = file_sender(w.send_message, transit.add_connection_hints, done)
    if not (yield _verified(reactor, cfg, w)):
        sender.reject_verification()
    else:
        ours = yield _transfer.transit_message(transit, w)
        sender.send_offer(outgoing.offer, ours)
    while not finished.called:
        body = yield w.get_message()
        sender.got_message(body)
    error = yield finished
    if error is not None:
        raise error
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
