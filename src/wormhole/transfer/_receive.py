"""Receiving with the classic protocol (File-transfer protocol,
"Recipient"; File-transfer protocol, "Transit") over a wormhole the
application created, under a ``ReceivePolicy``: where things land, which
offers are accepted, how large they may be.

Every name and path the peer proposes passes the receiving rules of
``wormhole._landing`` (the same rules as transfer-v2's); the bytes land
under a hidden temporary name and get their final name only once all of
them are on disk, and a directory's zipfile is unpacked by ``_unzip``
(nothing it says can reach outside the target).
"""
import os

import attrs
from twisted.internet import defer

from .. import _landing
from .._escape import excerpt
from .._guarded import DisplayGuard
from .._inactivity import give_up_after
from .._shutdown import OnShutdown
from ..errors import TransferError
from ..util import dict_to_bytes
from . import _mover
from ._flow import Outcome, close_early, connect, make_transit, no_op
from ._messages import TRANSFER_REJECTED, Declined
from ._receiver import Receiver
from ._unzip import receive_directory_into


class DeclinedOffer(_landing.Refused, Declined):
    """The offer was refused before anything was transferred: by the
    policy's ``accept``, or by the rules (an existing target, no room,
    ``only_text``, a limit)."""


@attrs.frozen
class Offer:
    """A file or directory the peer offers, checked by the rules; what
    ``ReceivePolicy.accept`` decides on."""

    kind: str      # "file" or "directory"
    name: str      # the offered filename/dirname (a checked name)
    size: int      # bytes that will come over Transit (a directory: its zipfile)
    unpacked: int  # bytes it takes on disk at most (the offer's numbytes)
    numfiles: int  # files in it (1 for a file)
    target: str    # the absolute path it will have


# why an offer is refused under ``only_text``, unless it says otherwise
ONLY_TEXT = "only text messages are accepted"


def _accept_all(offer):
    return True


@attrs.frozen
class ReceivePolicy:
    """What ``receive`` accepts, and where it writes.

    - ``folder``: where a file or directory lands, under its offered name;
    - ``output``: another name (relative to ``folder``), or a folder to
      land in;
    - ``accept(offer)``: called with the ``Offer`` once the rules passed
      it; True (or a Deferred firing True) accepts, False refuses
      ("transfer rejected" to the peer, ``DeclinedOffer`` here);
    - ``only_text``: refuse files and directories (a string is the end
      of the refusal's message: "the sender offered a file, and ...");
    - ``max_bytes``: refuse what takes more bytes on disk (None: no bound
      but the free space);
    - ``free_space(path)``: bytes free where ``path`` is (tests play a
      full disk with it);
    - ``peer_timeout``: seconds of silence from the sender (waiting for
      its offer, then between records) before giving up (None: no bound);
      ``timeout_hint`` ends that error's message.
    """

    folder: str = "."
    output: str = None
    accept: object = _accept_all
    only_text: bool = False
    max_bytes: int = None
    free_space: object = _landing.default_free_space
    peer_timeout: float = None
    timeout_hint: str = ""


@attrs.frozen
class Received:
    """What ``receive`` got: a text, or a file or directory on disk."""

    kind: str              # "text", "file" or "directory"
    text: str = None       # the text
    path: str = None       # where the file or directory was written
    size: int = 0          # bytes that came over Transit
    sha256: str = None     # their hex digest (sent back to the sender)
    via: str = None        # the Transit connection, e.g. "<-tcp:127.0.0.1:4001"
    seconds: float = 0.0   # from the Transit connection to the last byte on disk


def _numbers(kind, offer):
    """(bytes on the wire, bytes on disk at most, files) of an offer, or
    BadOffer."""
    keys = ("filesize",) if kind == "file" else ("zipsize", "numbytes", "numfiles")
    values = [offer.get(k) for k in keys]
    for k, v in zip(keys, values, strict=False):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise _landing.BadOffer(f"the sender's offer has a bad {k}: {excerpt(v)}")
    if kind == "file":
        return values[0], values[0], 1
    return tuple(values)


def check_offer(policy, kind, offer):
    """The ``Offer`` for a peer's ``file`` or ``directory`` value, or
    Refused (BadOffer when the offer itself is malformed)."""
    if policy.only_text:
        why = policy.only_text if isinstance(policy.only_text, str) else ONLY_TEXT
        raise _landing.Refused(f"the sender offered a {kind}, and {why}")
    size, unpacked, numfiles = _numbers(kind, offer)
    name = offer.get("filename" if kind == "file" else "dirname")
    folder = os.path.abspath(policy.folder)
    target = _landing.target_path(folder, name, policy.output)
    shown = os.path.relpath(target, folder) if target.startswith(folder + os.sep) else target
    _landing.check_not_existing(target, shown)
    if policy.max_bytes is not None and unpacked > policy.max_bytes:
        raise _landing.Refused(f"the {kind} takes {unpacked} bytes, more than the "
                               f"{policy.max_bytes} accepted")
    # a directory's zipfile stays beside it while it is unpacked
    needed = size if kind == "file" else size + unpacked
    _landing.check_room(policy.free_space, target, needed)
    return Offer(kind, os.path.basename(target), size, unpacked, numfiles, target)


@defer.inlineCallbacks
def receive(reactor, w, appid, policy=None, transit=None, transit_relay=None,
            first_message=None, connected=None, progress=None, unpacking=None,
            timing=None, cancellation=None):
    """Receive what the peer of ``w`` sends with the classic protocol:
    fires with ``Received`` (a text is acknowledged, a file or directory
    is written under ``policy``), or fails: ``DeclinedOffer`` when the
    policy refused the offer (the peer hears "transfer rejected"),
    ``BadOffer`` for a malformed one, ``TransferError`` otherwise.

    ``appid``: the one ``w`` was created with. ``transit``: a
    ``TransitReceiver``, or a callable making one (called once the offer is
    accepted); by default one with ``transit_relay``. The wormhole is closed
    early (File-transfer protocol, "Transit"), the application still waits
    for ``w.close()``. ``first_message``: a Deferred for the sender's first
    message when the application already asked the wormhole for it.

    Callables, all optional: ``connected(via)`` once Transit connected;
    ``progress(nbytes)`` as bytes are written; ``unpacking()`` when a
    directory's zipfile arrived and is about to be unpacked.

    ``cancellation``: a ``Cancellation`` the application may use to stop
    the transfer on purpose; while the bytes come, the sender is told why
    over Transit (docs/transfer.md "Cancelling").
    """
    policy = policy or ReceivePolicy()
    outcome = Outcome()
    texts = []
    their_hints = []
    offers = []

    def offered(kind, offer):
        offers.append((kind, offer))
    receiver = Receiver(w.send_message, texts.append, their_hints.extend, offered,
                        outcome.fire)
    # a file offer stops the mailbox loop: the decision comes next, and the
    # sender reads nothing until our answer
    while not outcome.called and not offers:
        message, first_message = (first_message or w.get_message()), None
        body = yield give_up_after(message, reactor, policy.peer_timeout,
                                   "the sender's offer", policy.timeout_hint)
        receiver.got_message(body)
    if not offers:
        yield outcome.result()
        return Received("text", text=texts[0])
    kind, offer = offers[0]
    try:
        checked = check_offer(policy, kind, offer)
        if not (yield defer.maybeDeferred(policy.accept, checked)):
            raise _landing.Refused(TRANSFER_REJECTED)
    except _landing.Refused as e:
        receiver.decline(e)
        if isinstance(e, _landing.BadOffer):
            raise  # a malformed offer is a failure, not a decision
        raise DeclinedOffer(*e.args) from None
    from ..transit import TransitReceiver
    transit = make_transit(transit, transit_relay, reactor, timing, TransitReceiver)
    ours = yield _mover.transit_message(transit, w)
    # our hints before the answer: the sender connects once it has the ack
    w.send_message(dict_to_bytes({"transit": ours}))
    transit.add_connection_hints(their_hints)
    receiver.accept()
    yield outcome.result()
    transit.set_transit_key(_mover.transit_key(w, appid))
    # our hints and file_ack are sent (File-transfer protocol, "Transit")
    close_early(w)
    pipe = yield connect(transit, reactor, cancellation)
    # the display is called from inside Transit's records: guarded
    display = DisplayGuard("a classic receive")
    try:
        result = yield _receive_bytes(reactor, pipe, checked, policy, connected or no_op,
                                      display.wrap(progress or no_op), unpacking or no_op,
                                      timing, cancellation)
    finally:
        if cancellation is not None:
            cancellation.over()
    return result


@defer.inlineCallbacks
def _receive_bytes(reactor, pipe, offer, policy, connected, progress, unpacking, timing,
                   cancellation):
    target = offer.target
    try:
        # a directory's zipfile lands beside it, then is unpacked
        partial = _landing.PartialFile(target if offer.kind == "file" else target + ".zip")
    except OSError as e:
        pipe.close()
        raise _disk_error(e, target) from None
    # the reactor stops (Ctrl-C) mid-transfer: no partial file stays behind
    on_shutdown = OnShutdown(reactor, partial.abort)
    try:
        via = pipe.describe()
        connected(via)
        timed = timing.add("transfer", bytes=offer.size) if timing else None
        started = reactor.seconds()
        digest = yield _mover.receive_file(pipe, partial, offer.size, progress, reactor,
                                           policy.peer_timeout, policy.timeout_hint,
                                           cancellation)
        try:
            if offer.kind == "file":
                partial.commit()
            else:
                unpacking()
                receive_directory_into(partial.path, target, offer.unpacked,
                                       offer.numfiles)
        except OSError as e:
            raise _disk_error(e, target) from None
        _mover.send_ack(pipe, digest)
        if timed is not None:
            timed.finish()  # docs/timing.md
    except BaseException:
        on_shutdown.cancel()
        partial.abort()
        pipe.close()
        raise
    on_shutdown.cancel()
    # the zipfile of a directory (a committed file's temporary name is gone)
    partial.abort()
    yield pipe.close()
    seconds = reactor.seconds() - started
    return Received(offer.kind, path=target, size=offer.size, sha256=digest, via=via,
                    seconds=seconds)


def _disk_error(e, target):
    """One line for what the disk refused us (full, read-only, a name
    too long for this file system...)."""
    return TransferError(f"cannot write '{target}': {e.strerror or e}")
