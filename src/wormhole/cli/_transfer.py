"""Moving the bytes of a file or directory over Transit (spec 004 9.3).

The sender streams the file as records (a streaming producer into the
record pipe: Transit's flow control decides the pace), hashing as it goes; the
receiver writes every record to a ``PartialFile`` (hashing the bytes as
they are written) and, once all announced bytes arrived and are on disk
(fsync), sends the final ack record
``{"ack": "ok", "sha256": HEX}``; the sender compares it with its own.
"""
import hashlib

import tqdm
from twisted.internet import defer, error, interfaces
from twisted.python import failure
from zope.interface import implementer

from .._inactivity import Watchdog, silence
from ..errors import TransferError
from ..util import bytes_to_dict, dict_to_bytes

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
def transit_message(transit):
    """The value of our ``transit`` message: abilities and hints (9.3)."""
    hints = yield transit.get_connection_hints()
    return {"abilities-v1": transit.get_connection_abilities(), "hints-v1": hints}


def progress_bar(cfg, total):
    """A byte counter with rate and ETA on stderr (none with --hide-progress)."""
    return tqdm.tqdm(total=total, unit="B", unit_scale=True, leave=True,
                     file=cfg.stderr, disable=cfg.hide_progress,
                     dynamic_ncols=False, ncols=80)


# 64 KiB: where SecretBox is fastest on this kind of machine (larger
# records fall out of the L2 cache, ~2x slower to seal); spec 004 6.2 lets
# records be any size and every receiver takes any size
RECORD_SIZE = 64 * 1024
# records sealed into one transport write: 4 x 64 KiB passes the
# transport's 256 KiB high-water mark (``_pipe.BULK_BUFFER``), so each
# write is alone in Twisted's buffer and goes to send(2) without being
# joined to other writes (one copy of every byte less; docs/performance.md)
RECORDS_PER_WRITE = 4


@implementer(interfaces.IPushProducer)
class _FileStreamer:
    """Reads, hashes and sends ``fileobj`` as records, as many per reactor
    turn as the transport buffers before it pauses us (its high-water mark
    is the pipe's ``BULK_BUFFER``), ``RECORDS_PER_WRITE`` records per
    write. One record per turn, as a pull producer does, cost a reactor
    turn and a ``send(2)`` per record (docs/performance.md, "File transfer
    and relay")."""

    def __init__(self, fileobj, pipe, hasher, progress):
        self._read = fileobj.read
        self._pipe = pipe
        self._hash = hasher.update
        self._progress = progress
        self._paused = True
        self.done = defer.Deferred()

    def start(self):
        self._pipe.registerProducer(self, True)
        self.resumeProducing()
        return self.done

    def resumeProducing(self):
        if self.done.called:
            return
        self._paused = False
        read, update, send = self._read, self._hash, self._pipe.send_records
        progress = self._progress.update
        try:
            while not self._paused:
                batch, size = [], 0
                while len(batch) < RECORDS_PER_WRITE:
                    chunk = read(RECORD_SIZE)
                    if not chunk:
                        break
                    update(chunk)
                    batch.append(chunk)
                    size += len(chunk)
                if not batch:
                    self._finish(None)
                    return
                progress(size)
                # may call pauseProducing before it returns: the loop ends
                send(batch)
        except Exception as e:
            self._finish(failure.Failure(e))

    def pauseProducing(self):
        self._paused = True

    def stopProducing(self):
        self._finish(failure.Failure(error.ConnectionClosed(
            "the transit connection closed while the file was being sent")))

    def _finish(self, result):
        self._paused = True
        if self.done.called:
            return
        self._pipe.unregisterProducer()
        if result is None:
            self.done.callback(None)
        else:
            self.done.errback(result)


@defer.inlineCallbacks
def send_file(pipe, fileobj, progress):
    """Stream ``fileobj`` into ``pipe``; fires with the sha256 (hex) sent."""
    hasher = hashlib.sha256()
    yield _FileStreamer(fileobj, pipe, hasher, progress).start()
    return hasher.hexdigest()


@defer.inlineCallbacks
def wait_for_ack(pipe, sent_digest):
    """The receiver's final record: it must say ``ok`` and carry our hash."""
    try:
        record = yield pipe.receive_record()
    except Exception as e:
        raise TransferError("the connection closed before the receiver confirmed the "
                            f"transfer ({e})") from None
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
