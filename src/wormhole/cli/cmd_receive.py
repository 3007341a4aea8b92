"""``wormhole receive``: the recipient
(File-transfer protocol, "Recipient"): the code (typed with <Tab>
completion, given, or allocated), the wait for the sender, then
transfer-v2 when the sender has it (``_receive_v2``), else the classic
recipient (``_receive_classic``): a text is printed; a file or
directory is checked, accepted by the human (or ``--accept-file``) and
received.

stdout carries only the received text (escaped, see ``escape_text``), the
code prompt and the ``ok? (Y/n): `` question; everything else goes to
stderr (settled against the reference 0.24, docs/cli.md).
"""
from twisted.internet import defer
from twisted.python.failure import Failure

from .. import input_with_completion as completing_input
from ..errors import KeyFormatError, WormholeClosed
from ._common import make_wormhole, run_and_close
from ._kept import discard_command
from ._receive_classic import from_sender, receive_classic
from ._receive_v2 import receive_session
from ._v2_session import peer_speaks_v2, wormhole_kwargs
from .ui.wording import CLASSIC_USED

# DeclinedOffer: served by __getattr__ below (imported on first use)
__all__ = ["DeclinedOffer", "PROMPT", "WAITING_DELAY", "receive"]  # noqa: F822


def __getattr__(name):
    # the classic refusal before anything moved (by the human or the
    # rules: exit 3), named here as before; the classic receiver's modules
    # load when it runs (``wormhole.transfer`` is lazy:
    # docs/performance.md, "Session 8: the fixed part")
    if name == "DeclinedOffer":
        from ..transfer import DeclinedOffer
        return DeclinedOffer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
    if cfg.discard_partial:
        discard_command(cfg)
        return
    w = make_wormhole(reactor, cfg, "receive", **wormhole_kwargs(cfg, "receive"))
    yield run_and_close(reactor, cfg, w,
                        lambda: _receive_on(reactor, cfg, w, input_with_completion))


@defer.inlineCallbacks
def _receive_on(reactor, cfg, w, input_with_completion):
    yield _handle_code(reactor, cfg, w, input_with_completion)
    notice = _WaitingNotice(reactor, w, cfg.stderr)
    try:
        # the sender shows up when its human runs it: no bound on that
        # wait; from its first message on, its software sets the pace
        yield w.get_unverified_key()
        verifier = yield from_sender(reactor, cfg, w.get_verifier(),
                                     "the sender's confirmation of the key")
    finally:
        notice.stop()
    if cfg.verify:
        # the sender decides (it asks its human); we only show ours
        print(f"Verifier {verifier.hex()}.", file=cfg.stderr, flush=True)
    # the sender's first message, when a transfer-v2 session read it
    # before we fell back to classic (a sender that cannot dilate)
    first = None
    protocol_note = None
    if not cfg.classic:
        if peer_speaks_v2((yield w.get_versions())):
            mailbox = yield receive_session(reactor, cfg, w)
            if mailbox is None:
                return
            first = mailbox.first_message()
        else:
            # said before a file or directory offer; a text (which our
            # sender, too, sends the classic way) needs no such line
            protocol_note = CLASSIC_USED
    yield receive_classic(reactor, cfg, w, first, protocol_note)


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _unless_closed(w, question):
    """The answer to the code ``question``; if the wormhole fails first
    (the Mailbox server cannot be reached), the question is given up and
    that failure is the answer, at once, not after the human typed a code
    nobody can use (docs/cli.md, "Messages")."""
    answer = defer.Deferred()

    def settle(result):
        # the first of the answer and the close wins; the other is dropped
        if not answer.called:
            if isinstance(result, Failure):
                answer.errback(result)
            else:
                answer.callback(result)

    def closed(failure):
        settle(failure)
        question.cancel()
    question.addBoth(settle)
    w.get_code().addErrback(closed)
    return answer


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
        entry = input_with_completion or completing_input
        # the question waits for the server's welcome: with no Mailbox
        # server to reach the human is told so instead of being asked for
        # a code nobody can use (docs/cli.md, "Messages")
        yield w.get_welcome()
        try:
            # a question like the others (ui.screen): its line ends if the
            # command does first (Ctrl-C) or input ends
            used_completion = yield _unless_closed(w, cfg.screen.asked(
                cfg.stderr, lambda: entry(PROMPT, w.input_code(), reactor)))
        except EOFError:
            raise KeyFormatError("no code was entered (standard input ended)") from None
        except WormholeClosed as e:
            # typed after the wormhole closed: say why it closed (no
            # Mailbox server: docs/cli.md, "Messages"), on a row of its
            # own: a code read from a pipe left the prompt's line open
            if not _isatty(cfg.stdin) and _isatty(cfg.stderr):
                print(file=cfg.stderr, flush=True)
            if isinstance(e.reason, Exception):
                raise e.reason from None
            raise
        if not used_completion:
            print(" (note: you can use <Tab> to complete words)", file=cfg.stderr,
                  flush=True)
    yield w.get_code()
