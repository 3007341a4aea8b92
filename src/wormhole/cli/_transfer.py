"""Moving the bytes of a file or directory over Transit (spec 004 9.3).

The sender streams the file as records (a streaming producer into the
record pipe: Transit's flow control decides the pace), hashing as it goes; the
receiver writes every record to a ``PartialFile`` (hashing the bytes as
they are written) and, once all announced bytes arrived and are on disk
(fsync), sends the final ack record
``{"ack": "ok", "sha256": HEX}``; the sender compares it with its own.
"""
import hashlib
import os

import tqdm
from twisted.internet import defer, error, interfaces
from twisted.python import failure
from zope.interface import implementer

from .._inactivity import Watchdog, silence
from ..errors import TransferError
from ..util import bytes_to_dict, dict_to_bytes
from ._display import naturalsize

# spec 004 9.3: both sides derive the Transit key from the wormhole key
TRANSIT_KEY_LENGTH = 32


def make_transit(factory, reactor, cfg):
    """A TransitSender/Receiver with the CLI's relay and --no-listen; a
    malformed --transit-helper is a readable error."""
    try:
        kwargs = {} if cfg.tor_manager is None else {"tor": cfg.tor_manager}
        return factory(cfg.transit_helper or None, no_listen=not cfg.listen,
                       reactor=reactor, timing=cfg.timing, **kwargs)
    except ValueError as e:
        raise TransferError(f"bad --transit-helper {cfg.transit_helper!r}: {e}") from None


def transit_key(w, appid):
    return w.derive_key(appid + "/transit-key", TRANSIT_KEY_LENGTH)


@defer.inlineCallbacks
def transit_message(transit, w=None):
    """The value of our ``transit`` message: abilities and hints (9.3);
    with the wormhole ``w``, hole punching too (docs/transit.md)."""
    nat_mapping = getattr(w, "_nat_mapping", None)  # fakes in tests lack it
    if nat_mapping is not None:
        transit._set_nat(nat_mapping())
    hints = yield transit.get_connection_hints()
    return {"abilities-v1": transit.get_connection_abilities(), "hints-v1": hints}


# the width when stderr is not a terminal (a log file, a pipe)
DEFAULT_WIDTH = 80
# below these widths, parts of the bar go (rather than be cut mid-number)
_FORMATS = [
    (60, "{l_bar}{bar}{r_bar}"),                                 # tqdm's full line
    (40, "{percentage:3.0f}% {n_fmt}/{total_fmt} {rate_fmt}"),  # no bar, no ETA
    (0, "{percentage:3.0f}% {n_fmt}/{total_fmt}"),
]


def terminal_width(stream):
    """The columns of the terminal ``stream`` writes to, or None."""
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def progress_bar(cfg, total, desc=None, position=0, initial=0, hidden=False, leave=True):
    """A byte counter with rate and ETA on stderr (none with
    --hide-progress, or ``hidden``), as wide as the terminal: a narrow one
    drops the bar, then the rate, so what is shown is never cut.
    ``desc`` names it (transfer-v2 shows the session's bar and, below it
    at ``position`` 1, the current offer's, which does not ``leave``)."""
    width = terminal_width(cfg.stderr)
    ncols = width or DEFAULT_WIDTH
    bar_format = next(f for least, f in _FORMATS if ncols - len(desc or "") >= least)
    if desc and not bar_format.startswith("{l_bar}"):
        bar_format = "{desc}: " + bar_format
    return tqdm.tqdm(total=total, unit="B", unit_scale=True, leave=leave, desc=desc,
                     file=cfg.stderr, disable=cfg.hide_progress or hidden,
                     ncols=ncols - 1 if width else ncols, bar_format=bar_format,
                     position=position, initial=initial)


def path_line(verb, path):
    """The line that says how the data goes: "Sending (->tcp:host:port).."."""
    return f"{verb} ({path}).."


def summary(verb, size, seconds, path):
    """The last line of a transfer: "Sent 8.0 MB in 1.23 s (6.5 MB/s) via
    ->relay:tcp:host:4001"."""
    rate = naturalsize(int(size / seconds)) + "/s" if seconds > 0 else "-"
    return f"{verb} {naturalsize(size)} in {seconds:.2f} s ({rate}) via {path}"


def peer_left(who, done, total, how="closed the connection"):
    """A peer gone mid-transfer, in one line: "the receiver closed the
    connection after 4.2 MB of 8.0 MB were sent" (``who``: "receiver" on
    the sending side, "sender" on the receiving side)."""
    moved = "were sent" if who == "receiver" else "arrived"
    return f"the {who} {how} after {_of(done, total)} {moved}"


# 64 KiB: where SecretBox is fastest on this kind of machine (larger
# records fall out of the L2 cache, ~2x slower to seal); spec 004 6.2 lets
# records be any size and every receiver takes any size
RECORD_SIZE = 64 * 1024
# records sealed into one transport write: 4 x 64 KiB passes the
# transport's 256 KiB high-water mark (``_pipe.BULK_BUFFER``), so each
# write is alone in Twisted's buffer and goes to send(2) without being
# joined to other writes (one copy of every byte less; docs/performance.md)
RECORDS_PER_WRITE = 4


class _ReadFailed(Exception):
    """Reading the file being sent failed (not the connection)."""


class _Shrank(Exception):
    """The file ended before the size the offer announced."""


class _Stalled(Exception):
    """Nothing could be sent for STALL_TIMEOUT seconds."""


# seconds the receiver may read nothing (the transport keeps us paused)
# before the sender gives up on it; and how long it may take to confirm
# once all bytes were sent: ACK_TIMEOUT plus the time to hash the file
# again from its disk at ACK_HASH_RATE bytes/s (docs/cli.md, "Errors")
STALL_TIMEOUT = 120.0
ACK_TIMEOUT = 120.0
ACK_HASH_RATE = 20 * 1000 * 1000


@implementer(interfaces.IPushProducer)
class _FileStreamer:
    """Reads, hashes and sends ``fileobj`` as records, as many per reactor
    turn as the transport buffers before it pauses us (its high-water mark
    is the pipe's ``BULK_BUFFER``), ``RECORDS_PER_WRITE`` records per
    write. One record per turn, as a pull producer does, cost a reactor
    turn and a ``send(2)`` per record (docs/performance.md, "File transfer
    and relay")."""

    def __init__(self, fileobj, pipe, hasher, progress, size, clock=None):
        self._read = fileobj.read
        # exactly the size the offer announced: bytes appended since (a
        # file being written, a log) are not sent (spec 004 9.3: the
        # receiver expects filesize bytes, then hashes them)
        self._left = size
        self._pipe = pipe
        self._hash = hasher.update
        self._progress = progress
        self._paused = True
        self.sent = 0  # bytes handed to the pipe
        self.done = defer.Deferred()
        # paused by the transport for STALL_TIMEOUT (the receiver reads
        # nothing): the receiver stopped answering (None: no watch)
        self._clock = clock
        self._stall = None

    def start(self):
        self._pipe.registerProducer(self, True)
        self.resumeProducing()
        return self.done

    def resumeProducing(self):
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self.done.called:
            return
        self._paused = False
        read, update, send = self._read, self._hash, self._pipe.send_records
        progress = self._progress.update
        try:
            while not self._paused:
                batch, size = [], 0
                while len(batch) < RECORDS_PER_WRITE and self._left:
                    try:
                        chunk = read(min(RECORD_SIZE, self._left))
                    except OSError as e:
                        raise _ReadFailed(e) from None
                    if not chunk:
                        if batch:
                            break  # send what was read; the next read fails
                        raise _Shrank()
                    update(chunk)
                    batch.append(chunk)
                    size += len(chunk)
                    self._left -= len(chunk)
                if not batch:
                    self._finish(None)
                    return
                progress(size)
                # may call pauseProducing before it returns: the loop ends
                send(batch)
                self.sent += size
        except Exception as e:
            self._finish(failure.Failure(e))

    def pauseProducing(self):
        self._paused = True
        if self._clock is not None and self._stall is None and not self.done.called:
            self._stall = self._clock.callLater(STALL_TIMEOUT, self._stalled)

    def _stalled(self):
        self._stall = None
        self._finish(failure.Failure(_Stalled()))

    def stopProducing(self):
        self._finish(failure.Failure(error.ConnectionClosed(
            "the transit connection closed while the file was being sent")))

    def _finish(self, result):
        self._paused = True
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self.done.called:
            return
        self._pipe.unregisterProducer()
        if result is None:
            self.done.callback(None)
        else:
            self.done.errback(result)


def _of(done, total):
    return f"{naturalsize(done)} of {naturalsize(total)}"


@defer.inlineCallbacks
def send_file(pipe, fileobj, progress, total, clock=None):
    """Stream the first ``total`` bytes of ``fileobj`` into ``pipe``;
    fires with the sha256 (hex) sent. When the connection goes away meanwhile (the
    receiver quit, or its network did), the TransferError says how far
    we got, in one line (issue 11: never a traceback). With ``clock``, a
    receiver that reads nothing for STALL_TIMEOUT seconds ends it too."""
    hasher = hashlib.sha256()
    streamer = _FileStreamer(fileobj, pipe, hasher, progress, total, clock)
    try:
        yield streamer.start()
    except _Stalled:
        raise TransferError(f"the receiver stopped answering: nothing could be sent "
                            f"for {STALL_TIMEOUT:.0f} s after {_of(streamer.sent, total)}"
                            ) from None
    except _Shrank:
        raise TransferError(f"the file ended after {_of(streamer.sent, total)}: it "
                            "shrank while being sent") from None
    except _ReadFailed as e:
        # reading our own file failed (a disk error): say so
        reason = e.args[0]
        raise TransferError(f"cannot read the file being sent after "
                            f"{_of(streamer.sent, total)}: "
                            f"{reason.strerror or reason}") from None
    except (error.ConnectionClosed, error.ConnectionLost, ConnectionError):
        raise TransferError(peer_left("receiver", streamer.sent, total)) from None
    return hasher.hexdigest()


@defer.inlineCallbacks
def wait_for_ack(pipe, sent_digest, clock=None, size=0):
    """The receiver's final record: it must say ``ok`` and carry our hash.
    With ``clock``, it must come within ACK_TIMEOUT seconds plus the time
    to hash ``size`` bytes at ACK_HASH_RATE."""
    d = pipe.receive_record()
    if clock is not None:
        timeout = ACK_TIMEOUT + size / ACK_HASH_RATE
        d.addTimeout(timeout, clock)
    try:
        record = yield d
    except error.ConnectionClosed:
        raise TransferError("the receiver closed the connection after all bytes were "
                            "sent, before it confirmed the transfer") from None
    except defer.TimeoutError:
        raise TransferError(f"the receiver stopped answering: all bytes were sent, and no "
                            f"confirmation came in {timeout:.0f} s") from None
    try:
        ack = bytes_to_dict(record)
    except ValueError:
        ack = None
    if not isinstance(ack, dict) or ack.get("ack") != "ok":
        raise TransferError(f"the receiver did not confirm the transfer: {record[:200]!r}")
    if "sha256" in ack and ack["sha256"] != sent_digest:
        raise TransferError(f"the receiver got different bytes: sha256 {ack['sha256']} "
                            f"where we sent {sent_digest}")


@implementer(interfaces.IConsumer)
class _ToPartial:
    """The record pipe's consumer: every record into the PartialFile. A
    write that fails (the disk filled up after all), or a sender silent
    for longer than the peer timeout, is kept as ``error`` (a
    TransferError saying which), the connection is closed, and the
    transfer fails with that reason."""

    def __init__(self, partial, progress, pipe, clock, timeout):
        self._partial = partial
        self._progress = progress
        self._pipe = pipe
        self.error = None
        self._watchdog = Watchdog(clock, timeout, self._silent) if clock else None
        self._timeout = timeout
        # set by receive_file: stop waiting for the pipe (it may never
        # report the close we asked for, if the peer does not answer it)
        self.abandon = None

    def registerProducer(self, producer, streaming):
        pass

    def unregisterProducer(self):
        pass

    def _fail(self, error):
        if self.error is None:
            self.error = error
            self._pipe.close()
            if self.abandon is not None:
                self.abandon()

    def _silent(self):
        self._fail(silence("the sender's data", self._timeout, PEER_TIMEOUT_HINT))

    def stop(self):
        if self._watchdog is not None:
            self._watchdog.stop()

    def write(self, data):
        if self.error is not None:
            return
        if self._watchdog is not None:
            self._watchdog.kick()
        try:
            self._partial.write(data)
        except OSError as e:
            self._fail(TransferError(f"cannot write the received data: "
                                     f"{e.strerror or e}"))
            return
        self._progress.update(len(data))


# what the CLI adds to a PeerTimeout's message: the option that changes it
PEER_TIMEOUT_HINT = " (--peer-timeout)"


@defer.inlineCallbacks
def receive_file(pipe, partial, size, progress, clock=None, timeout=None):
    """Fill ``partial`` with ``size`` bytes from ``pipe``; fires with the
    sha256 (hex) of the bytes written, once they are on disk. With a
    ``clock``, gives up (PeerTimeout) when the sender sends nothing for
    ``timeout`` seconds (docs/security.md)."""
    sink = _ToPartial(partial, progress, pipe, clock, timeout)
    try:
        if size > 0:
            try:
                done = pipe.connectConsumer(sink, expected=size)
                sink.abandon = done.cancel
                yield done
            except error.ConnectionClosed:
                if sink.error is None:
                    raise TransferError(peer_left("sender", partial.size, size)) from None
            except Exception as e:
                if sink.error is None:
                    raise TransferError(f"the transfer was interrupted: {e}") from None
    finally:
        sink.stop()
    if sink.error is not None:
        raise sink.error
    if partial.size != size:
        raise TransferError(f"the sender sent {partial.size} bytes, "
                            f"{size} were announced")
    try:
        return partial.finish()
    except OSError as e:
        raise TransferError(f"cannot write the received data: {e.strerror or e}") from None


def send_ack(pipe, digest):
    pipe.send_record(dict_to_bytes({"ack": "ok", "sha256": digest}))
