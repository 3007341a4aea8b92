"""``wormhole receive``: the recipient of spec 004 chapter 9 (9.2): a
text is printed; a file or directory is checked, accepted by the human
(or ``--accept-file``) and received over Transit (9.3) under the safety
rules of ``wormhole._landing``.

stdout carries only the received text (escaped, see ``escape_text``), the
code prompt and the ``ok? (Y/n): `` question; everything else goes to
stderr (settled against the reference 0.24, docs/cli.md).
"""
import os

from twisted.internet import defer

from .. import _rlcompleter, transfer
from .._inactivity import give_up_after
from ..errors import KeyFormatError
from . import _transfer_v2
from ._common import ask, make_transit, make_wormhole, run_and_close
from ._display import escape_text, naturalsize, received_text
from ._progress import PEER_TIMEOUT_HINT, ClassicTransferBar, summary

PROMPT = "Enter receive wormhole code: "


# how long we wait for the peer before saying that we are waiting
WAITING_DELAY = 1.0


class _WaitingNotice:
    """After WAITING_DELAY, say on stderr what we are still waiting for:
    the sender's PAKE (no key yet) or its confirmation (key, no verifier)."""

    def __init__(self, reactor, w, stderr):
        self._stderr = stderr
        self._have_key = False
        self._have_verifier = False
        w.get_unverified_key().addCallbacks(self._got_key, lambda f: None)
        w.get_verifier().addCallbacks(self._got_verifier, lambda f: None)
        self._timer = reactor.callLater(WAITING_DELAY, self._tick)

    def _got_key(self, key):
        self._have_key = True

    def _got_verifier(self, verifier):
        self._have_verifier = True
        self.stop()

    def _tick(self):
        if not self._have_key:
            print("Waiting for sender...", file=self._stderr, flush=True)
        elif not self._have_verifier:
            print("Key established, waiting for confirmation...", file=self._stderr,
                  flush=True)

    def stop(self):
        if self._timer.active():
            self._timer.cancel()


@defer.inlineCallbacks
def receive(reactor, cfg, input_with_completion=None):
    """Receive one text message and print it on stdout."""
    w = make_wormhole(reactor, cfg, "receive", **_transfer_v2.wormhole_kwargs(cfg, "receive"))
    yield run_and_close(reactor, w,
                        lambda: _receive_on(reactor, cfg, w, input_with_completion))


@defer.inlineCallbacks
def _receive_on(reactor, cfg, w, input_with_completion):
    yield _handle_code(reactor, cfg, w, input_with_completion)
    notice = _WaitingNotice(reactor, w, cfg.stderr)
    try:
        # the sender shows up when its human runs it: no bound on that
        # wait; from its first message on, its software sets the pace
        yield w.get_unverified_key()
        verifier = yield _from_sender(reactor, cfg, w.get_verifier(),
                                      "the sender's confirmation of the key")
    finally:
        notice.stop()
    if cfg.verify:
        # the sender decides (it asks its human); we only show ours
        print(f"Verifier {verifier.hex()}.", file=cfg.stderr, flush=True)
    # the sender's first message, when a transfer-v2 session read it
    # before we fell back to classic (a sender that cannot dilate)
    first = None
    if not cfg.classic:
        if _transfer_v2.peer_speaks_v2((yield w.get_versions())):
            mailbox = yield _transfer_v2.receive_session(reactor, cfg, w)
            if mailbox is None:
                return
            first = mailbox.first_message()
        else:
            print(_transfer_v2.CLASSIC_USED, file=cfg.stderr, flush=True)

    bar = ClassicTransferBar(cfg, "Receiving", 0)

    def unpacking():
        bar.close()
        print("Unpacking zipfile..", file=cfg.stderr, flush=True)
    policy = transfer.ReceivePolicy(
        folder=cfg.cwd or os.getcwd(), output=cfg.output_file,
        accept=lambda offer: _ask_human(reactor, cfg, offer, bar),
        only_text=cfg.only_text and "--only-text accepts only text messages",
        free_space=cfg.free_space,
        peer_timeout=cfg.peer_timeout, timeout_hint=PEER_TIMEOUT_HINT)
    try:
        got = yield transfer.receive(
            reactor, w, cfg.appid, policy,
            transit=lambda: make_transit(cfg.transit_receiver, reactor, cfg),
            first_message=first, connected=bar.connected, progress=bar.progress,
            unpacking=unpacking, timing=cfg.timing)
    finally:
        bar.close()
    if got.kind == "text":
        print(received_text(got.text), file=cfg.stdout, flush=True)
        return
    what = "file" if got.kind == "file" else "files"
    print(f"Received {what} written to: {escape_text(got.path)}", file=cfg.stderr,
          flush=True)
    print(summary("Received", got.size, got.seconds, escape_text(got.via)),
          file=cfg.stderr, flush=True)


def _from_sender(reactor, cfg, d, what):
    """``d``, given up after ``--peer-timeout`` seconds of silence."""
    return give_up_after(d, reactor, cfg.peer_timeout, what, PEER_TIMEOUT_HINT)


@defer.inlineCallbacks
def _ask_human(reactor, cfg, offer, bar):
    """The policy's ``accept``: say what is offered and where it goes, and
    ask (unless --accept-file)."""
    cwd = cfg.cwd or os.getcwd()
    target = offer.target
    shown = os.path.relpath(target, cwd) if target.startswith(cwd + os.sep) else target
    shown = escape_text(shown)  # the name came from the peer
    size = naturalsize(offer.size)
    if offer.kind == "file":
        print(f"Receiving file ({size}) into: '{shown}'", file=cfg.stderr, flush=True)
    else:
        print(f"Receiving directory ({size}) into: '{shown}'/\n"
              f"{offer.numfiles} files, {naturalsize(offer.unpacked)} (uncompressed)",
              file=cfg.stderr, flush=True)
    bar.size = offer.size
    if cfg.accept_file:
        return True
    try:
        answer = yield ask(reactor, cfg, "ok? (Y/n): ")
    except EOFError:
        answer = "n"
    return answer.strip().lower() in ("", "y", "yes")


@defer.inlineCallbacks
def _handle_code(reactor, cfg, w, input_with_completion):
    if cfg.zeromode:
        w.set_code("0-")
    elif cfg.code:
        w.set_code(cfg.code)
    elif cfg.allocate:
        w.allocate_code(cfg.code_length)
        code = yield w.get_code()
        print(f"Wormhole code is: {code}\nOn the other computer, please run:\n\n"
              f"wormhole send --code {code} ...\n", file=cfg.stderr, flush=True)
    else:
        entry = input_with_completion or _rlcompleter.input_with_completion
        try:
            used_completion = yield entry(PROMPT, w.input_code(), reactor)
        except EOFError:
            raise KeyFormatError("no code was entered (standard input ended)")
        if not used_completion:
            print(" (note: you can use <Tab> to complete words)", file=cfg.stderr,
                  flush=True)
    yield w.get_code()
