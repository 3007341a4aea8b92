"""Sending with the classic protocol (File-transfer protocol, "Sender";
File-transfer protocol, "Transit") over a wormhole the application
created: a text through the mailbox, a file or a directory (zipped
first) through Transit.

Both functions take the wormhole once its code is set (they read and send
its messages; the application shows the code, and closes the wormhole at
the end). What a human sees is the application's business: it hears the
steps through plain callables (``verify``, ``connected``, ``progress``,
``sent``), the way ``transfer_v2`` reports progress.
"""
import attrs
from twisted.internet import defer

from .._guarded import DisplayGuard
from .._shutdown import OnShutdown
from . import _mover, _outgoing
from ._flow import Outcome, close_early, connect, make_transit, no_op
from ._offer import file_sender, text_sender
from ._outgoing import Outgoing


@attrs.frozen
class Sent:
    """A file or directory the receiver confirmed (its sha256 matched)."""

    kind: str          # "file" or "directory"
    size: int          # bytes that went over Transit (a directory: its zipfile)
    sha256: str        # hex digest of those bytes, confirmed by the receiver
    via: str           # the Transit connection, e.g. "->tcp:127.0.0.1:4001"
    seconds: float     # from the Transit connection to the confirmation
    grown: str = None  # a warning when the file grew while it was sent


@defer.inlineCallbacks
def _verified(w, verify):
    """With ``verify``: whether it accepts the wormhole's verifier."""
    if verify is None:
        return True
    verifier = yield w.get_verifier()
    accepted = yield defer.maybeDeferred(verify, verifier)
    return bool(accepted)


@defer.inlineCallbacks
def _read_until_done(w, machine, outcome):
    # File-transfer protocol, "Sender": the ack (or an error) is the last
    # mailbox message read
    while not outcome.called:
        body = yield w.get_message()
        machine.got_message(body)
    yield outcome.result()


@defer.inlineCallbacks
def send_text(w, text, verify=None):
    """Offer ``text`` (``{"offer": {"message": TEXT}}``) to the peer of
    ``w``; fires when the receiver acknowledged it (``message_ack``).

    ``verify(verifier)`` (bytes; may return a Deferred), when given, is
    asked first: False sends the peer an ``error`` and fails with
    ``Declined``. A peer's ``error`` fails with ``TransferError``
    (``Declined`` when a human refused)."""
    outcome = Outcome()
    sender = text_sender(w.send_message, outcome.fire)
    if not (yield _verified(w, verify)):
        sender.reject_verification()
    if not outcome.called:
        sender.send_offer({"message": text})
    yield _read_until_done(w, sender, outcome)


@defer.inlineCallbacks
def send_file(reactor, w, appid, what, transit=None, transit_relay=None, verify=None,
              connected=None, progress=None, sent=None, timing=None, cancellation=None):
    """Offer a file or directory to the peer of ``w`` and move its bytes
    over Transit; fires with ``Sent`` once the receiver confirmed them.

    ``what``: a path (a directory is zipped into a temporary file, removed
    at the end) or an ``Outgoing`` from ``prepare()`` (the caller cleans it
    up). ``appid``: the one ``w`` was created with (the Transit key is
    derived from it, File-transfer protocol, "Transit"). ``transit``: a
    ``TransitSender`` (or a callable making one); by default one with
    ``transit_relay`` (a hint such as ``"tcp:relay.example:4001"``, or None
    for direct connections only). The wormhole is closed early
    (File-transfer protocol, "Transit": once the receiver's ``file_ack``
    arrived); the application still waits for ``w.close()``.

    Callables, all optional: ``verify(verifier)`` as for ``send_text``;
    ``connected(via)`` once Transit connected (``via`` describes the
    connection); ``progress(nbytes)`` as bytes go; ``sent(grown)`` once
    all bytes went and the receiver's confirmation is awaited (``grown``:
    a warning when the file grew meanwhile, else None).

    ``cancellation``: a ``Cancellation`` the application may use to stop
    the transfer on purpose; while the bytes move, the receiver is told
    why over Transit (docs/transfer.md "Cancelling").
    """
    from ..transit import TransitSender
    outgoing = what if isinstance(what, Outgoing) else _outgoing.prepare(what)
    on_shutdown = OnShutdown(reactor, outgoing.cleanup) if outgoing is not what else None
    try:
        transit = make_transit(transit, transit_relay, reactor, timing, TransitSender)
        result = yield _offer_and_send(reactor, w, appid, outgoing, transit, verify,
                                       connected or no_op,
                                       DisplayGuard("a classic send").wrap(progress or no_op),
                                       sent or no_op, timing, cancellation)
    finally:
        if on_shutdown is not None:
            on_shutdown.cancel()
            outgoing.cleanup()
    return result


@defer.inlineCallbacks
def _offer_and_send(reactor, w, appid, outgoing, transit, verify, connected, progress,
                    sent, timing, cancellation):
    outcome = Outcome()
    sender = file_sender(w.send_message, transit.add_connection_hints, outcome.fire)
    if not (yield _verified(w, verify)):
        sender.reject_verification()
    else:
        ours = yield _mover.transit_message(transit, w)
        sender.send_offer(outgoing.offer, ours)
    yield _read_until_done(w, sender, outcome)
    transit.set_transit_key(_mover.transit_key(w, appid))
    # the file_ack was the last mailbox message (File-transfer protocol,
    # "Transit")
    close_early(w)
    pipe = yield connect(transit, reactor, cancellation)
    sending = _mover.Sending(pipe, clock=reactor, size=outgoing.size)
    moving = cancellation.moving(sending.cancel) if cancellation is not None else None
    try:
        via = pipe.describe()
        connected(via)
        timed = timing.add("transfer", bytes=outgoing.size) if timing else None
        started = reactor.seconds()
        with outgoing.open() as f:
            digest = yield sending.send(f, progress, outgoing.size)
            grown = _outgoing.grown(f, outgoing)
        sent(grown)
        yield sending.confirmed(digest, size=outgoing.size)
        if timed is not None:
            timed.finish()  # docs/timing.md
        seconds = reactor.seconds() - started
    except BaseException:
        pipe.close()
        raise
    finally:
        if moving is not None:
            moving()
    yield pipe.close()
    return Sent(outgoing.kind, outgoing.size, digest, via, seconds, grown)

