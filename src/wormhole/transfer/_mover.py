"""Moving the bytes of a file or directory over Transit (File-transfer
protocol, "Transit").

``progress(nbytes)``, a plain callable as in ``transfer_v2``, hears the
bytes moved on either side; nothing here shows anything.

The sender streams the file as records (a streaming producer into the
record pipe: Transit's flow control decides the pace), hashing as it goes; the
receiver writes every record to a ``PartialFile`` (hashing the bytes as
they are written) and, once all announced bytes arrived and are on disk
(fsync), sends the final ack record
``{"ack": "ok", "sha256": HEX}``; the sender compares it with its own.
Either side may stop on purpose meanwhile and tell the other over the
same connection (``_cancel``).
"""
import hashlib

from twisted.internet import defer, error, interfaces
from twisted.python import failure
from zope.interface import implementer

from .._inactivity import Watchdog, silence
from .._wording import peer_left, size_of
from ..errors import TransferError
from ..util import dict_to_bytes
from . import _cancel
from ._messages import parse_message

# File-transfer protocol, "Transit": both sides derive the Transit key
# from the wormhole key
TRANSIT_KEY_LENGTH = 32


def transit_key(w, appid):
    return w.derive_key(appid + "/transit-key", TRANSIT_KEY_LENGTH)


@defer.inlineCallbacks
def transit_message(transit, w):
    """The value of our ``transit`` message: abilities and hints
    (File-transfer protocol, "Transit"), with the outside hint of ``w``'s
    NAT mapping when it has one (docs/transit.md "Through a NAT")."""
    transit.set_nat_mapping(w._nat_mapping())
    hints = yield transit.get_connection_hints()
    return {"abilities-v1": transit.get_connection_abilities(), "hints-v1": hints}


# 64 KiB: where SecretBox is fastest on this kind of machine (larger
# records fall out of the L2 cache, ~2x slower to seal); Transit protocol,
# "Records" lets records be any size and every receiver takes any size
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
        # file being written, a log) are not sent (File-transfer protocol,
        # "Transit": the receiver expects filesize bytes, then hashes them)
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
        progress = self._progress
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

    @property
    def due(self):
        """Bytes of the file not handed to the pipe yet."""
        return self._left

    def interrupt(self, exc):
        """Stop now (nothing more is read or sent), failing with ``exc``."""
        self._finish(failure.Failure(exc))

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


class Sending:
    """The sender's side of the bytes on one record pipe
    (File-transfer protocol, "Transit"): ``send`` streams the file,
    ``confirmed`` checks the receiver's final ack, ``cancel(reason)`` stops
    on purpose and tells the receiver (``_cancel``). The receiver's next
    record is asked for before the first byte goes: one that comes while the
    file is still being sent (its cancel, ``_cancel``) stops the send at
    once. With ``clock``, a receiver that reads nothing for STALL_TIMEOUT
    seconds, or does not confirm in time, ends it too."""

    def __init__(self, pipe, clock=None, size=0):
        self._pipe = pipe
        self._clock = clock
        self._size = size        # what a cancel before send() says is due
        self._streamer = None
        self._cancelled = None   # our reason, once cancel() was called
        self._answer = None      # the receiver's record (bytes or Failure)
        self._waiting = None     # confirmed()'s Deferred for it
        self.sent = 0            # bytes handed to the pipe
        pipe.receive_record().addBoth(self._answered)

    def _answered(self, result):
        self._answer = result
        streamer = self._streamer
        if streamer is not None and not streamer.done.called:
            if not isinstance(result, failure.Failure):
                streamer.interrupt(_cancel.receiver_spoke_early(result))
            # a closed connection: the transport stops the streamer itself
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.called:
            waiting.callback(None)
        return None  # kept in _answer: nobody else waits on this Deferred

    @defer.inlineCallbacks
    def send(self, fileobj, progress, total):
        """Stream the first ``total`` bytes of ``fileobj`` into the pipe
        (``progress(nbytes)`` hears each batch); fires with the sha256
        (hex) sent. When the connection goes away meanwhile (the receiver
        quit, or its network did), the TransferError says how far we got,
        in one line, never a traceback (docs/cli.md, "Errors")."""
        if self._cancelled is not None:
            raise _cancel.Cancelled(f"cancelled: {self._cancelled}")
        answer = self._answer
        if answer is not None and not isinstance(answer, failure.Failure):
            raise _cancel.receiver_spoke_early(answer)  # before our first byte
        hasher = hashlib.sha256()
        streamer = _FileStreamer(fileobj, self._pipe, hasher, progress, total, self._clock)
        self._streamer = streamer
        try:
            yield streamer.start()
        except _Stalled:
            raise TransferError(f"the receiver stopped answering: nothing could be sent "
                                f"for {STALL_TIMEOUT:.0f} s after "
                                f"{size_of(streamer.sent, total)}") from None
        except _Shrank:
            raise TransferError(f"the file ended after {size_of(streamer.sent, total)}: it "
                                "shrank while being sent") from None
        except _ReadFailed as e:
            # reading our own file failed (a disk error): say so
            reason = e.args[0]
            raise TransferError(f"cannot read the file being sent after "
                                f"{size_of(streamer.sent, total)}: "
                                f"{reason.strerror or reason}") from None
        except (error.ConnectionClosed, error.ConnectionLost, ConnectionError):
            raise TransferError(peer_left("receiver", streamer.sent, total)) from None
        finally:
            self.sent = streamer.sent
        return hasher.hexdigest()

    @defer.inlineCallbacks
    def confirmed(self, sent_digest, size=0):
        """The receiver's final record: it must say ``ok`` and carry our
        hash. With a clock, it must come within ACK_TIMEOUT seconds plus
        the time to hash ``size`` bytes at ACK_HASH_RATE."""
        if self._answer is None:
            self._waiting = d = defer.Deferred()
            if self._clock is not None:
                timeout = ACK_TIMEOUT + size / ACK_HASH_RATE
                d.addTimeout(timeout, self._clock)
            try:
                yield d
            except defer.TimeoutError:
                raise TransferError(f"the receiver stopped answering: all bytes were sent, "
                                    f"and no confirmation came in {timeout:.0f} s") from None
        record = self._answer
        if isinstance(record, failure.Failure):
            raise TransferError("the receiver closed the connection after all bytes were "
                                "sent, before it confirmed the transfer")
        ack = parse_message(record)
        cancelled = _cancel.receiver_cancelled(ack)
        if cancelled is not None:
            raise cancelled  # a receiver of ours that stopped on purpose
        if not isinstance(ack, dict) or ack.get("ack") != "ok":
            raise TransferError(f"the receiver did not confirm the transfer: {record[:200]!r}")
        if "sha256" in ack and ack["sha256"] != sent_digest:
            raise TransferError(f"the receiver got different bytes: sha256 {ack['sha256']} "
                                f"where we sent {sent_digest}")

    def cancel(self, reason):
        """Stop on purpose: until the file's last byte was sent, stop
        reading it, send the empty record and the reason (``_cancel``),
        then close; after it, only close (the receiver has every byte).
        Fires once the connection closed, or after
        ``_cancel.FLUSH_TIMEOUT`` seconds."""
        if self._cancelled is not None:
            return _closed_within(self._pipe, self._clock)  # told already
        self._cancelled = reason
        streamer = self._streamer
        due = self._size if streamer is None else streamer.due
        if due and (streamer is None or not streamer.done.called):
            records = [_cancel.CANCEL_RECORD]
            why = _cancel.reason_record(reason, due)
            if why is not None:
                records.append(why)
            try:
                # before the streamer fails: whoever waits on it closes the pipe
                self._pipe.send_records(records)
            except Exception:
                pass  # the connection is already closed: nothing to tell
            if streamer is not None:
                streamer.interrupt(_cancel.Cancelled(f"cancelled: {reason}"))
        return _closed_within(self._pipe, self._clock)


def _closed_within(pipe, clock):
    """``pipe.close()`` (flush, hang up), waited for at most
    ``_cancel.FLUSH_TIMEOUT`` seconds (with a clock)."""
    d = pipe.close()
    if clock is not None:
        d.addTimeout(_cancel.FLUSH_TIMEOUT, clock)
    return d.addErrback(lambda f: None)


@implementer(interfaces.IConsumer)
class _ToPartial:
    """The record pipe's consumer: every record into the PartialFile. A
    write that fails (the disk filled up after all), a sender silent for
    longer than the peer timeout, or the sender's cancel (an empty
    record, then its reason: ``_cancel``), is kept as ``error`` (a
    TransferError saying which), the connection is closed, and the
    transfer fails with that reason."""

    def __init__(self, partial, progress, pipe, clock, timeout, timeout_hint):
        self._partial = partial
        self._progress = progress
        self._pipe = pipe
        self._clock = clock
        self.error = None
        self._watchdog = Watchdog(clock, timeout, self._silent) if clock else None
        self._timeout = timeout
        self._timeout_hint = timeout_hint
        # the sender's empty record came: its reason is the next record
        # (a timer while we wait for it, True without a clock)
        self.stopping = None
        # set by receive_file: stop waiting for the pipe (it may never
        # report the close we asked for, if the peer does not answer it)
        self.abandon = None
        self._abandon_later = None  # that, right after a record (_fail)

    def registerProducer(self, producer, streaming):
        pass

    def unregisterProducer(self):
        pass

    def _fail(self, error, abandon=True):
        if self.error is None:
            self.error = error
            self._pipe.close()
            # not from inside a record the pipe is still delivering: the
            # close ends the transfer then (the pipe fires its Deferred);
            # a close that never reports it (the connection does not
            # answer) is abandoned right after that record all the same
            # (the fuzz of tests/hostile found a sender's two empty
            # records leaving the command waiting forever)
            if self.abandon is not None:
                if abandon:
                    self.abandon()
                elif self._clock is not None:
                    self._abandon_later = self._clock.callLater(0, self.abandon)

    def _silent(self):
        self._fail(silence("the sender's data", self._timeout, self._timeout_hint))

    def stop(self):
        if self._watchdog is not None:
            self._watchdog.stop()
        self._stop_waiting()
        if self._abandon_later is not None and self._abandon_later.active():
            self._abandon_later.cancel()

    def _stop_waiting(self):
        if self.stopping is not True and self.stopping is not None and self.stopping.active():
            self.stopping.cancel()

    def _sender_cancelled(self, reason, abandon=True):
        self._stop_waiting()
        self._fail(_cancel.sender_cancelled(reason), abandon)

    def closed(self, done, size):
        """The error for a connection that closed after ``done`` bytes."""
        if self.error is not None:
            return self.error
        if self.stopping is not None:
            return _cancel.sender_cancelled()  # the empty record, no reason
        return TransferError(peer_left("sender", done, size))

    def write(self, data):
        if self.error is not None:
            return
        if self.stopping is not None:
            # the record after the sender's empty one: its reason (_cancel)
            self._sender_cancelled(bytes(data), abandon=False)
            return
        if not data:
            # mid-file, only the sender's cancel is empty (_cancel)
            self.stopping = (self._clock.callLater(_cancel.REASON_TIMEOUT,
                                                   self._sender_cancelled, None)
                             if self._clock is not None else True)
            return
        if self._watchdog is not None:
            self._watchdog.kick()
        try:
            self._partial.write(data)
        except (OSError, ValueError) as e:  # ValueError: aborted on shutdown (Ctrl-C)
            self._fail(TransferError(f"cannot write the received data: "
                                     f"{getattr(e, 'strerror', None) or e}"))
            return
        self._progress(len(data))

    def cancel(self, reason):
        """We stop on purpose: tell the sender in place of the final ack
        (``_cancel``), close; fires once closed (bounded)."""
        if self.error is None:
            self.error = _cancel.Cancelled(f"cancelled: {reason}")
            try:
                self._pipe.send_record(_cancel.receiver_record(reason))
            except Exception:
                pass  # the connection is already closed: nothing to tell
        d = _closed_within(self._pipe, self._clock)
        if self.abandon is not None:
            self.abandon()
        return d


@defer.inlineCallbacks
def receive_file(pipe, partial, size, progress, clock=None, timeout=None, timeout_hint="",
                 cancellation=None):
    """Fill ``partial`` with ``size`` bytes from ``pipe`` (``progress
    (nbytes)`` hears each record written); fires with the sha256 (hex) of
    the bytes written, once they are on disk. With a ``clock``, gives up
    (PeerTimeout, its message ending with ``timeout_hint``) when the
    sender sends nothing for ``timeout`` seconds (docs/security.md).
    ``cancellation`` (a ``_cancel.Cancellation``) may stop it on purpose
    while the bytes come."""
    sink = _ToPartial(partial, progress, pipe, clock, timeout, timeout_hint)
    moving = cancellation.moving(sink.cancel) if cancellation is not None else None
    try:
        if size > 0 and sink.error is None:
            try:
                done = pipe.connectConsumer(sink, expected=size)
                sink.abandon = done.cancel
                yield done
            except error.ConnectionClosed:
                raise sink.closed(partial.size, size) from None
            except Exception as e:
                if sink.error is None:
                    raise TransferError(f"the transfer was interrupted: {e}") from None
    finally:
        sink.stop()
        if moving is not None:
            moving()
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
