"""``wormhole send --text``: the sender of spec 004 chapter 9 (9.1), text
mode only (files and directories are the next issue).

What goes where was settled by running the reference 0.24 (docs/cli.md):
progress and instructions on stderr; on stdout only what a script may
read -- the "Text to send: " prompt, the verifier question, and the note
that the code was consumed.
"""
import os

from twisted.internet import defer

from .._status import ConsumedCode
from ..errors import TransferError
from . import _text
from ._common import ask, make_wormhole, run_and_close
from ._display import naturalsize

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
    if cfg.what is not None and cfg.text is None:
        if not os.path.exists(cfg.what):
            raise TransferError(f"Cannot send: no file or directory named '{cfg.what}'")
        raise TransferError("sending files is not supported yet; use --text")
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
    """Send ``cfg.text`` (or stdin, or a prompted line) to the peer."""
    text = yield _get_text(reactor, cfg)
    print(f"Sending text message ({naturalsize(len(text))})", file=cfg.stderr)
    note = _ConsumedNote(cfg.stdout)
    w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)
    completed = yield run_and_close(reactor, w, lambda: _send_on(reactor, cfg, w, text))
    if completed:
        print("text message sent", file=cfg.stderr)


@defer.inlineCallbacks
def _send_on(reactor, cfg, w, text):
    if cfg.zeromode:
        w.set_code("0-")
    elif cfg.code:
        w.set_code(cfg.code)
    else:
        w.allocate_code(cfg.code_length)
    code = yield w.get_code()
    print(_instructions(cfg, code), file=cfg.stderr, flush=True)

    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)
    sender = _text.TextSender(w.send_message, done)

    if cfg.verify:
        verifier = yield w.get_verifier()
        answer = yield ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
        if answer.strip().lower() not in ("yes", "y"):
            sender.reject_verification()
    if not finished.called:
        sender.send_offer(text)
    while not finished.called:
        body = yield w.get_message()
        sender.got_message(body)
    error = yield finished
    if error is not None:
        raise error
