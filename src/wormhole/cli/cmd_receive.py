"""``wormhole receive``: the recipient of spec 004 chapter 9 (9.2): a
text is printed; a file or directory is checked, accepted by the human
(or ``--accept-file``) and received over Transit (9.3) under the safety
rules of ``_incoming``.

stdout carries only the received text (escaped, see ``escape_text``), the
code prompt and the ``ok? (Y/n): `` question; everything else goes to
stderr (settled against the reference 0.24, docs/cli.md).
"""
import os

from twisted.internet import defer

from .. import _rlcompleter
from .._escape import excerpt
from .._inactivity import give_up_after
from ..errors import KeyFormatError, TransferError
from ..util import dict_to_bytes
from . import _incoming, _transfer, _transfer_v2
from ._common import OnShutdown, ask, close_early, make_wormhole, run_and_close
from ._display import escape_text, naturalsize, received_text
from ._receiver import Receiver
from ._text import Declined

PROMPT = "Enter receive wormhole code: "


class DeclinedOffer(_incoming.Refused, Declined):
    """The offer was refused before anything was transferred: by the
    human, or by the rules (overwrite, room, --only-text)."""


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

    finished = defer.Deferred()

    def done(error):
        if not finished.called:
            finished.callback(error)

    def display(text):
        print(received_text(text), file=cfg.stdout, flush=True)
    their_hints = []
    offers = []

    def offered(kind, offer):
        offers.append((kind, offer))
    receiver = Receiver(w.send_message, display, their_hints.extend, offered, done)
    # a file offer stops the mailbox loop: the decision (and the human)
    # come next, and the sender reads nothing until our answer
    while not finished.called and not offers:
        message, first = (first if first is not None else w.get_message()), None
        body = yield _from_sender(reactor, cfg, message, "the sender's offer")
        receiver.got_message(body)
    if offers:
        kind, offer = offers[0]
        yield _receive_path(reactor, cfg, w, receiver, kind, offer, their_hints, finished)
        return
    error = yield finished
    if error is not None:
        raise error


def _from_sender(reactor, cfg, d, what):
    """``d``, given up after ``--peer-timeout`` seconds of silence."""
    return give_up_after(d, reactor, cfg.peer_timeout, what, _transfer.PEER_TIMEOUT_HINT)


def _numbers(kind, offer):
    """(bytes on the wire, bytes on disk at most, files) of an offer, or
    BadOffer."""
    keys = ("filesize",) if kind == "file" else ("zipsize", "numbytes", "numfiles")
    values = [offer.get(k) for k in keys]
    for k, v in zip(keys, values):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise _incoming.BadOffer(f"the sender's offer has a bad {k}: {excerpt(v)}")
    if kind == "file":
        return values[0], values[0], 1
    return tuple(values)


@defer.inlineCallbacks
def _decide(reactor, cfg, kind, offer):
    """Check the offer and ask the human; returns (target path, bytes on
    the wire, bytes unpacked at most), or raises Refused (the peer is then
    told 'transfer rejected')."""
    if cfg.only_text:
        raise _incoming.Refused(f"the sender offered a {kind}, and --only-text "
                                "accepts only text messages")
    cwd = cfg.cwd or os.getcwd()
    size, unpacked, numfiles = _numbers(kind, offer)
    target = _incoming.target_path(kind, offer, cfg.output_file, cwd)
    shown = os.path.relpath(target, cwd) if target.startswith(cwd + os.sep) else target
    _incoming.check_not_existing(target, shown)
    shown = escape_text(shown)  # the name came from the peer
    needed = size if kind == "file" else size + unpacked
    _incoming.check_room(cfg.free_space, target, needed)
    if kind == "file":
        print(f"Receiving file ({naturalsize(size)}) into: '{shown}'", file=cfg.stderr,
              flush=True)
    else:
        print(f"Receiving directory ({naturalsize(size)}) into: '{shown}'/\n"
              f"{numfiles} files, {naturalsize(unpacked)} (uncompressed)",
              file=cfg.stderr, flush=True)
    if not cfg.accept_file:
        try:
            answer = yield ask(reactor, cfg, "ok? (Y/n): ")
        except EOFError:
            answer = "n"
        if answer.strip().lower() not in ("", "y", "yes"):
            raise _incoming.Refused("transfer rejected")
    return target, size, unpacked, numfiles


@defer.inlineCallbacks
def _receive_path(reactor, cfg, w, receiver, kind, offer, their_hints, finished):
    try:
        target, size, unpacked, numfiles = yield _decide(reactor, cfg, kind, offer)
    except _incoming.Refused as e:
        receiver.decline(e)
        if isinstance(e, _incoming.BadOffer):
            raise  # a malformed offer is a failure (exit 1), not a decision
        # refused before anything came: the transfer was declined (exit 3)
        raise DeclinedOffer(*e.args) from None
    transit = _transfer.make_transit(cfg.transit_receiver, reactor, cfg)
    ours = yield _transfer.transit_message(transit, w)
    # our hints before the answer: the sender connects once it has the ack
    w.send_message(dict_to_bytes({"transit": ours}))
    transit.add_connection_hints(their_hints)
    receiver.accept()
    error = yield finished
    if error is not None:
        raise error
    transit.set_transit_key(_transfer.transit_key(w, cfg.appid))
    close_early(w)  # our hints and file_ack are sent (spec 9.3)
    pipe = yield transit.connect()
    try:
        partial = _incoming.PartialFile(target if kind == "file" else
                                        os.path.join(os.path.dirname(target),
                                                     os.path.basename(target) + ".zip"))
    except OSError as e:
        pipe.close()
        raise _disk_error(e, target) from None
    # Ctrl-C (reactor shutdown) mid-transfer: no partial file stays behind
    on_shutdown = OnShutdown(reactor, partial.abort)

    def cleanup():
        on_shutdown.cancel()
        # the zipfile of a directory, or what arrived of a failed transfer
        partial.abort()
    try:
        # the hint's host name came from the peer
        print(_transfer.path_line("Receiving", escape_text(pipe.describe())),
              file=cfg.stderr, flush=True)
        timed = cfg.timing.add("transfer", bytes=size)  # docs/timing.md
        started = reactor.seconds()
        with _transfer.progress_bar(cfg, size) as progress:
            digest = yield _transfer.receive_file(pipe, partial, size, progress,
                                                  reactor, cfg.peer_timeout)
        try:
            if kind == "file":
                partial.commit()
            else:
                print("Unpacking zipfile..", file=cfg.stderr, flush=True)
                _incoming.receive_directory_into(partial.path, target, unpacked,
                                                 numfiles)
        except OSError as e:
            raise _disk_error(e, target) from None
        _transfer.send_ack(pipe, digest)
        timed.finish()
    except BaseException:
        cleanup()
        pipe.close()
        raise
    cleanup()
    yield pipe.close()
    what = "file" if kind == "file" else "files"
    print(f"Received {what} written to: {escape_text(target)}", file=cfg.stderr,
          flush=True)
    print(_transfer.summary("Received", size, reactor.seconds() - started,
                            escape_text(pipe.describe())),
          file=cfg.stderr, flush=True)


def _disk_error(e, target):
    """One line for what the disk refused us (full, read-only, a name
    too long for this file system...)."""
    return TransferError(f"cannot write '{target}': {e.strerror or e}")


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
