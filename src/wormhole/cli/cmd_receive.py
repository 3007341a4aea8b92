"""``wormhole receive``: the recipient of spec 004 chapter 9 (9.2), text
mode only (file and directory offers are refused for now).

stdout carries only the received text (escaped, see ``escape_text``) and
the code prompt; everything else goes to stderr (settled against the
reference 0.24, docs/cli.md).
"""
from twisted.internet import defer

from .. import _rlcompleter
from ..errors import KeyFormatError
from . import _text
from ._common import make_wormhole, run_and_close
from ._display import escape_text

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
    w = make_wormhole(reactor, cfg, "receive")
    yield run_and_close(reactor, w,
                        lambda: _receive_on(reactor, cfg, w, input_with_completion))


@defer.inlineCallbacks
def _receive_on(reactor, cfg, w, input_with_completion):
    yield _handle_code(reactor, cfg, w, input_with_completion)
    notice = _WaitingNotice(reactor, w, cfg.stderr)
    try:
        verifier = yield w.get_verifier()
    finally:
        notice.stop()
    if cfg.verify:
        # the sender decides (it asks its human); we only show ours
        print(f"Verifier {verifier.hex()}.", file=cfg.stderr, flush=True)

    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)

    def display(text):
        print(escape_text(text), file=cfg.stdout, flush=True)
    receiver = _text.TextReceiver(w.send_message, display, done)
    while not finished.called:
        body = yield w.get_message()
        receiver.got_message(body)
    error = yield finished
    if error is not None:
        raise error


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
