"""What every sending command does before the transfer, whatever the
protocol: take or allocate the code and tell the human what the other
one must run (stderr; the QR code with ``--qr``, between the code and
the instructions as the reference 0.24 draws it), note on stdout when
the code is consumed, and, with ``--verify``, ask about the verifier."""
from twisted.internet import defer

from .. import ConsumedCode
from ..transfer import VERIFICATION_REJECTED, Declined
from ..util import dict_to_bytes
from ._uri import transfer_uri
from .ui import qr
from .ui.prompt import ask

CONSUMED_NOTE = "Note: code has been consumed and can no longer be used."


class ConsumedNote:
    """Prints CONSUMED_NOTE on stdout once, when the status says the
    nameplate was released (the peer arrived: nobody else can use it)."""

    def __init__(self, stdout):
        self._stdout = stdout
        self._printed = False

    def status_update(self, status):
        if isinstance(status.code, ConsumedCode) and not self._printed:
            self._printed = True
            print(CONSUMED_NOTE, file=self._stdout, flush=True)


def code_line(code):
    """The sender's first line about the code (none with -0)."""
    return f"Wormhole code is: {code}"


def instructions(cfg, code):
    """What the sender tells its human to tell the other one (stderr),
    after the code line and its QR code."""
    args = ["wormhole", "receive"] + (["--lan"] if cfg.lan else [])
    if cfg.verify:
        args.append("--verify")
    args.append("-0" if cfg.zeromode else code)
    return "\n".join(["On the other computer, please run:", "", " ".join(args), ""])


@defer.inlineCallbacks
def announce_code(cfg, w):
    """Set or allocate ``w``'s code and say it: the code, its QR code,
    then what to run on the other computer (the reference 0.24's order)."""
    if cfg.zeromode:
        w.set_code("0-")
    elif cfg.code:
        w.set_code(cfg.code)
    else:
        w.allocate_code(cfg.code_length)
    code = yield w.get_code()
    if not cfg.zeromode:  # "0-" is no code to show
        print(code_line(code), file=cfg.stderr, flush=True)
        if cfg.qr:
            qr.draw(transfer_uri(code, cfg.relay_url), cfg.stderr)
    print(instructions(cfg, code), file=cfg.stderr, flush=True)


@defer.inlineCallbacks
def verified(reactor, cfg, w):
    """With --verify: whether the human accepts the verifier."""
    if not cfg.verify:
        return True
    verifier = yield w.get_verifier()
    answer = yield ask(reactor, cfg, f"Verifier {verifier.hex()}. ok? (yes/no): ")
    return answer.strip().lower() in ("yes", "y")


@defer.inlineCallbacks
def verified_or_declined(reactor, cfg, w):
    """With --verify, the human's word on the verifier; a no tells the
    peer and ends the command as declined (exit 3)."""
    if not (yield verified(reactor, cfg, w)):
        w.send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))
        raise Declined(VERIFICATION_REJECTED)
