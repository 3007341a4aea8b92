"""``--json`` for ``wormhole send`` and ``wormhole receive`` (docs/cli.md
"JSON lines"; schema: docs/json-lines.schema.json): the library's
transfer events (``wormhole.session``) as one JSON object per line on
stdout, the receiver's decisions read as JSON lines on stdin, every
failure one ``error`` line with a stable ``kind``. Nothing else is
written on stdout; stderr keeps the usual one-line ``ERROR:`` and the
exit status is the usual one (docs/cli.md "Exit status").
"""
import json
import sys

import attrs
from twisted.internet import defer
from zope.interface import implementer

from .. import read_in_thread, session
from ..errors import (
    KeyFormatError,
    LonelyError,
    ServerConnectionError,
    TransferError,
)
from ._common import make_wormhole, run_and_close
from ._interrupt import INTERRUPTION

SCHEMA_VERSION = 1
# progress lines of one offer: at most one per this many seconds (and the last)
PROGRESS_INTERVAL = 0.25
# the longest decision line we read from stdin
MAX_LINE = 64 * 1024

_TYPES = {
    session.ProtocolChosen: "protocol", session.OfferArrived: "offer",
    session.OfferRefused: "refused", session.OfferAccepted: "accepted",
    session.Progress: "progress", session.Received: "received",
    session.TextReceived: "text", session.Sent: "sent", session.Failed: "error",
    session.Finished: "finished",
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
class StdinDecisions:
    """Each offer's decision is the next line on stdin:
    ``{"type": "decision", "accept": true}`` (or false). The end of input,
    or a line that is no such object, declines."""

    def __init__(self, reactor, stdin, accept_all=False):
        self._reactor = reactor
        self._stdin = stdin
        self._accept_all = accept_all

    def decide(self, offer):
        if self._accept_all:
            return True
        d = read_in_thread(self._reactor, self._stdin.readline, MAX_LINE)
        return d.addCallback(self._parsed)

    @staticmethod
    def _parsed(line):
        try:
            decision = json.loads(line) if line else None
        except ValueError:
            return False
        return (isinstance(decision, dict) and decision.get("type") == "decision"
                and decision.get("accept") is True)


def _on_interrupt(reactor, lines):
    """Before the reactor stops on a signal: the error line says so."""
    def said():
        if INTERRUPTION.signum is not None and not lines.errored:
            lines.write("error", kind="interrupted", message=INTERRUPTION.reason)
    return reactor.addSystemEventTrigger("before", "shutdown", said)


@defer.inlineCallbacks
def _run(reactor, cfg, mode, body):
    lines = Lines(reactor, cfg.stdout)
    _on_interrupt(reactor, lines)
    options = {} if cfg.classic else session.wormhole_options(mode)
    w = make_wormhole(reactor, cfg, mode, **options)
    observer = _Observer(lines)
    try:
        yield run_and_close(reactor, w, lambda: body(w, lines, observer))
    except Exception as e:
        if not lines.errored:
            lines.write("error", kind=error_kind(e), message=str(e))
        raise


def send(reactor, cfg):
    """``wormhole send --json``: the code line, then the transfer's events."""
    if cfg.classic:
        raise TransferError("--json uses the library's transfer: give no --classic")

    @defer.inlineCallbacks
    def body(w, lines, observer):
        if cfg.code:
            w.set_code(cfg.code)
        else:
            w.allocate_code(cfg.code_length)
        lines.write("code", code=(yield w.get_code()))
        yield session.Transfer(reactor, w, cfg.appid, observer,
                               transit_helper=cfg.transit_helper, listen=cfg.listen).send(
            list(cfg.paths), text=cfg.text)
    return _run(reactor, cfg, "send", body)


def receive(reactor, cfg):
    """``wormhole receive --json CODE``: the transfer's events; each
    offer's decision from stdin (``--accept-file``: all accepted)."""
    if cfg.classic:
        raise TransferError("--json uses the library's transfer: give no --classic")
    if not cfg.code:
        raise TransferError("--json needs the code as an argument")
    if cfg.output_file:
        raise TransferError("--json receives under the offered names: give no -o")

    def body(w, lines, observer):
        w.set_code(cfg.code)
        policy = StdinDecisions(reactor, cfg.stdin or sys.stdin, cfg.accept_file)
        folder = cfg.cwd or "."
        return session.Transfer(reactor, w, cfg.appid, observer, policy, folder=folder,
                                transit_helper=cfg.transit_helper,
                                listen=cfg.listen).receive()
    return _run(reactor, cfg, "receive", body)
