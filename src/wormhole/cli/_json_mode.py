"""``--json`` for ``wormhole send``, ``receive`` and ``share``
(docs/cli.md "JSON lines"; schema: docs/json-lines.schema.json): the
library's transfer events (``wormhole.session``) as one JSON object per
line on stdout, the decisions (and ``share``'s new offers and its end)
read as JSON lines on stdin, every failure one ``error`` line with a
stable ``kind``. Nothing else is written on stdout; stderr keeps the
usual one-line ``ERROR:`` and the exit status is the usual one
(docs/cli.md "Exit status").
"""
import json
import sys

import attrs
from twisted.internet import defer
from zope.interface import implementer

from .. import read_in_thread, session, transfer
from ..errors import (
    KeyFormatError,
    LonelyError,
    ServerConnectionError,
    TransferError,
)
from ..util import dict_to_bytes
from ._common import make_wormhole, run_and_close
from .ui.progress import PEER_TIMEOUT_HINT

SCHEMA_VERSION = 1
# progress lines of one offer: at most one per this many seconds (and the last)
PROGRESS_INTERVAL = 0.25
# the longest command line we read from stdin
MAX_LINE = 64 * 1024
# decisions kept for offers that have not come yet
MAX_EARLY = 64

_TYPES = {
    session.ProtocolChosen: "protocol", session.OfferArrived: "offer",
    session.OfferRefused: "refused", session.OfferAccepted: "accepted",
    session.Progress: "progress", session.Received: "received",
    session.TextReceived: "text", session.Sent: "sent", session.Failed: "error",
    session.Finished: "finished", session.OfferFailed: "offer-failed",
    session.Connected: "connected", session.Totals: "totals", session.FileStarted: "file",
}


def error_kind(error):
    """The stable ``kind`` of an error line for an exception."""
    if isinstance(error, KeyFormatError):
        return "bad-code"
    if isinstance(error, LonelyError):
        return "lonely"
    if isinstance(error, ServerConnectionError):
        return "mailbox-unreachable"
    return session.failure_event(error).kind


class Lines:
    """Writes one JSON object per line; progress at a bounded rate."""

    def __init__(self, reactor, out):
        self._reactor = reactor
        self._out = out
        self._last_progress = {}  # offer name -> when its last line went
        self.errored = False

    def write(self, line_type, **fields):
        line = {"v": SCHEMA_VERSION, "type": line_type}
        line.update({k: v for k, v in fields.items() if v is not None})
        self._out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._out.flush()
        if line_type == "error":
            self.errored = True

    def event(self, event):
        line_type = _TYPES[type(event)]
        if isinstance(event, session.Progress):
            now = self._reactor.seconds()
            last = self._last_progress.get(event.name)
            if (last is not None and now - last < PROGRESS_INTERVAL
                    and event.done != event.total):
                return
            self._last_progress[event.name] = now
        if line_type == "error" and self.errored:
            return  # said already (an interruption)
        self.write(line_type, **attrs.asdict(event))


@implementer(session.ITransferObserver)
class _Observer:
    def __init__(self, lines):
        self._lines = lines

    def event(self, event):
        self._lines.event(event)


@implementer(session.IReceivePolicy)
class StdinCommands:
    """The JSON lines on stdin, read one at a time in a daemon thread
    (the read blocks) until the end of input. ``{"type": "offer",
    "path": P}`` offers P (``share``), ``{"type": "end"}`` ends the
    session (``share``; so does the end of input); every other line is
    the next offer's decision: ``{"type": "decision", "accept": true}``
    accepts, anything else declines, and so does the end of input for the
    offers still to be decided. With ``accept_all`` nothing is asked."""

    def __init__(self, reactor, stdin, accept_all=False):
        self._reactor = reactor
        self._stdin = stdin
        self._accept_all = accept_all
        self._on_offer = lambda path: None
        self._on_end = lambda: None
        self._waiting = []    # decisions asked for, oldest first
        self._early = []      # decisions that came before their offer
        self._ended = False
        self._reading = False
        # share reads all along (start()); receive only while a decision waits
        self._always = False

    def start(self, on_offer, on_end):
        """Read commands from now on (``share``: offers and the end come
        unasked, ``on_offer(path)`` and ``on_end()`` take them);
        ``receive`` reads only while a decision waits."""
        self._on_offer = on_offer
        self._on_end = on_end
        self._always = True
        self._read()

    def decide(self, offer):
        if self._accept_all:
            return True
        if self._early:
            return self._early.pop(0)
        if self._ended:
            return False
        d = defer.Deferred()
        self._waiting.append(d)
        self._read()
        return d

    def _read(self):
        if self._reading or self._ended or not (self._always or self._waiting):
            return
        self._reading = True
        read = read_in_thread(self._reactor, self._stdin.readline, MAX_LINE)
        read.addCallbacks(self._got, self._failed)

    def _failed(self, failure):
        self._reading = False
        self._got("")

    def _got(self, line):
        self._reading = False
        if not line:
            self._ended = True
            waiting, self._waiting = self._waiting, []
            for d in waiting:
                d.callback(False)
            self._on_end()
            return
        self._command(line)
        self._read()

    def _command(self, line):
        try:
            command = json.loads(line)
        except ValueError:
            command = None
        kind = command.get("type") if isinstance(command, dict) else None
        if kind == "offer" and isinstance(command.get("path"), str):
            self._on_offer(command["path"])
        elif kind == "end":
            self._on_end()
        else:
            accept = kind == "decision" and command.get("accept") is True
            if self._waiting:
                self._waiting.pop(0).callback(accept)
            elif len(self._early) < MAX_EARLY:
                self._early.append(accept)


def _on_interrupt(reactor, lines, interruption):
    """Before the reactor stops on a signal: the error line says so."""
    def said():
        if interruption.signum is not None and not lines.errored:
            lines.write("error", kind="interrupted", message=interruption.reason)
    return reactor.addSystemEventTrigger("before", "shutdown", said)


@defer.inlineCallbacks
def _run(reactor, cfg, mode, options, body):
    lines = Lines(reactor, cfg.stdout)
    _on_interrupt(reactor, lines, cfg.interruption)
    w = make_wormhole(reactor, cfg, mode, **options)
    if cfg.proxy is not None:
        # the proxy's address, its credentials redacted (docs/proxy.md)
        lines.write("proxy", url=str(cfg.proxy_url), direct=bool(cfg.proxy_direct))
    observer = _Observer(lines)
    try:
        yield run_and_close(reactor, cfg, w, lambda: body(w, lines, observer))
    except Exception as e:
        if not lines.errored:
            lines.write("error", kind=error_kind(e), message=str(e))
        raise


def _options(cfg, mode):
    """What the wormhole announces: transfer-v2's versions and Dilation,
    or nothing more with --classic."""
    return {} if cfg.classic else session.wormhole_options(mode)


def _transfer(reactor, cfg, w, observer, policy=None, kind=session.Transfer, **kw):
    """The library's transfer with the command's options; --peer-timeout
    bounds the silences as it does without --json (docs/security.md,
    "Timeouts on the receive side")."""
    timeouts = {"offer_timeout": cfg.peer_timeout, "inactivity_timeout": cfg.peer_timeout,
                "timeout_hint": PEER_TIMEOUT_HINT}
    if cfg.peer_timeout is not None:
        timeouts["peer_timeout"] = min(session.PEER_TIMEOUT, cfg.peer_timeout)
    if kind is session.Share:
        # a share lasts until its side ends it: no bound between offers
        del timeouts["offer_timeout"]
    return kind(reactor, w, cfg.appid, observer, policy, folder=cfg.cwd or ".",
                transit_helper=cfg.transit_helper, listen=cfg.listen,
                classic=cfg.classic, **timeouts, **kw)


@defer.inlineCallbacks
def _verified(reactor, cfg, w, lines, commands=None):
    """With --verify: the verifier line; a sender (``commands`` given)
    then reads a decision line, and a no (or the end of input) tells the
    peer and ends declined, as a human's no does (docs/cli.md
    "Options")."""
    if not cfg.verify:
        return
    verifier = yield w.get_verifier()
    lines.write("verifier", verifier=verifier.hex())
    if commands is None:
        return
    if not (yield commands.decide(None)):
        w.send_message(dict_to_bytes({"error": transfer.VERIFICATION_REJECTED}))
        raise transfer.Declined(transfer.VERIFICATION_REJECTED)


@defer.inlineCallbacks
def _code(cfg, w, lines):
    """The code: given, or allocated and written as the first line."""
    if cfg.code:
        w.set_code(cfg.code)
        yield w.get_code()
        return
    w.allocate_code(cfg.code_length)
    lines.write("code", code=(yield w.get_code()))


def send(reactor, cfg):
    """``wormhole send --json``: the code line, then the transfer's events."""
    @defer.inlineCallbacks
    def body(w, lines, observer):
        yield _code(cfg, w, lines)
        yield _verified(reactor, cfg, w, lines,
                        StdinCommands(reactor, cfg.stdin or sys.stdin))
        yield _transfer(reactor, cfg, w, observer).send(list(cfg.paths), text=cfg.text)
    return _run(reactor, cfg, "send", _options(cfg, "send"), body)


def receive(reactor, cfg):
    """``wormhole receive --json CODE``: the transfer's events; each
    offer's decision from stdin (``--accept-file``: all accepted)."""
    if not cfg.code:
        raise TransferError("--json needs the code as an argument")

    @defer.inlineCallbacks
    def body(w, lines, observer):
        w.set_code(cfg.code)
        policy = StdinCommands(reactor, cfg.stdin or sys.stdin, cfg.accept_file)
        receiving = _transfer(reactor, cfg, w, observer, policy,
                              output=cfg.output_file).receive()
        # the receiver's verifier is shown when it is known, never asked
        # about; a transfer that fails first says why itself
        _verified(reactor, cfg, w, lines).addErrback(lambda f: None)
        yield receiving
    return _run(reactor, cfg, "receive", _options(cfg, "receive"), body)


def share(reactor, cfg):
    """``wormhole share --json [PATH]...``: the code line (when we made
    it), then the session's events; decisions, new offers and the end
    from stdin."""
    @defer.inlineCallbacks
    def body(w, lines, observer):
        yield _code(cfg, w, lines)
        commands = StdinCommands(reactor, cfg.stdin or sys.stdin, cfg.accept_file)
        # each side of share is asked, as a sender is
        yield _verified(reactor, cfg, w, lines,
                        StdinCommands(reactor, cfg.stdin or sys.stdin))
        sharing = _transfer(reactor, cfg, w, observer, commands, kind=session.Share,
                            output=cfg.output_file)
        ran = sharing.run(list(cfg.paths))
        # an offer's failure is its own offer-failed line
        commands.start(lambda path: sharing.offer(path).addErrback(lambda f: None),
                       sharing.end)
        yield ran
    return _run(reactor, cfg, "share", session.share_options(), body)
