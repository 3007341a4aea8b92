"""The receiving side of one offer
(Dilated File Transfer, "Making an Offer"): an Automat machine per offer
subchannel the peer opened.

The first record must be a FileOffer or a DirectoryOffer; the application
decides (``accept(sink)`` or ``reject(reason)``). For a file the data
follows the accept directly; for a directory each file comes after a
FileOffer header that must name the next offered path, in the offered
order, within the offered total size. Data beyond a file's announced size
is refused. At the end of each file the sender's FileAcknowledge comes
first ("it MUST wait for the FileAcknowledge from the sender"); we answer
with ours (our own size and hash) and keep the file only when both
match; on a mismatch the bytes are deleted and the application is told.
The offering side closes the subchannel when it is done.

Neighbours are wired once (``wire``): the subchannel (``IOfferChannel``:
``write(record)``, ``close()``) and the application's side
(``IOfferReceiverDelegate``): ``ask(offer)`` (the decision is fed back as
``accept`` or ``reject``), ``accepted()`` (our accept went out: the wait
for the sender's data begins), ``progress(nbytes)``,
``file_started(path, size, offset)``, ``resumed(nbytes)`` and
``finished(result)``. The sink given to ``accept`` (an ``ISink``, ``_interfaces``)
writes the files (``_sink.py``). Each record is given to the machine as
what it is (an offer or header, file data, an acknowledgement) and the
state says what it means: data is written only in R3_receiving and is
refused in every other state. What each kind of record does is a
per-state attribute (``_on_data``, ``_on_announcement``, ``_on_ack``,
``_dilation._state_paths``), set first in every transition: in
R3_receiving data goes straight to the file and the sender's
FileAcknowledge straight to its check, in R2_awaiting_header a header
straight to its check, without an Automat transition per record (the
self-loops they were cost more than a small file's bytes:
docs/transfer-v2.md, "Per-record work"); every other state feeds the
record to the machine as an input. A resumable sink (``IResumableSink``)
(the "resume" feature) first checks what an earlier session left, which
means hashing it: ``run_hashing`` (``_hashing``) runs its ``check_kept``
away from the reactor while the machine waits in R7_checking_kept, and
cancels it when the offer ends first; only then is our answer sent.
"""
import attr
from automat import MethodicalMachine
from twisted.internet.defer import CancelledError
from zope.interface import implementer

from .._automat_private import bind_inputs, index_transitions, trace_hook
from .._dilation._state_paths import StatePaths
from ..errors import TransferError
from . import _hashing
from . import _messages as M
from ._interfaces import (
    IOfferChannel,
    IOfferReceiver,
    IOfferReceiverDelegate,
    IResumableSink,
    ISink,
)


class HashMismatch(TransferError):
    """The bytes we received are not the ones the sender sent: deleted."""


class ReceiveFailed(TransferError):
    """The offer did not complete (protocol error, lost, cancelled)."""


class OfferAlreadyAnswered(TransferError):
    """``accept()`` or ``reject()`` of an offer that was answered already
    and is still under way (docs/transfer-v2.md, "Library API"): the
    first answer stands."""


class StreamAborted(ReceiveFailed):
    """The offering side ended its stream before its end (the "stream"
    feature: its input failed, docs/transfer-v2.md "Streams")."""


class OfferRefused(ReceiveFailed):
    """An offer subchannel of the peer's ended before its offer was known
    (a record over the limits, a malformed record or offer, another
    protocol error, the peer's silence): no IncomingOffer exists, so the
    session's ``on_refused`` hears it (docs/transfer-v2.md)."""


@attr.s(frozen=True)
class Received:
    """A completed incoming offer."""
    offer = attr.ib()
    path = attr.ib()   # where it is now (the sink's final path)
    files = attr.ib()
    bytes = attr.ib()


@attr.s(frozen=True)
class Rejected:
    """We rejected the offer (``reason`` was sent to the peer)."""
    offer = attr.ib()
    reason = attr.ib()


@implementer(IOfferReceiver)
class OfferReceiver:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, run_hashing=_hashing.synchronous):
        self._run_hashing = run_hashing
        self._checking = None   # the check of a resumable sink, while it runs
        self._channel = None
        self._delegate = None
        # after a resume, the bytes of the offer we hold and will not
        # receive again, each time the sender's headers change them (its
        # answer; a partial file continued after the changed ones)
        self._held = 0
        self._offer = None
        self._sink = None
        self._writer = None     # the file being received
        self._remaining = []    # paths of a directory offer still to come
        self._announced = 0     # bytes announced by headers so far
        self._totals = [0, 0]   # files, bytes verified
        # fed once per record and several times per file (_automat_private)
        bind_inputs(self, ("_got_data", "_got_announcement", "_got_ack", "_got_header",
                           "_got_ack_more"))
        self._paths.install_initial(self, "R0_awaiting_offer")

    def wire(self, channel, delegate):
        """Once, before the first record: the offer subchannel (an
        IOfferChannel) and the application's side (an
        IOfferReceiverDelegate)."""
        self._channel = IOfferChannel(channel)
        self._delegate = IOfferReceiverDelegate(delegate)

    # -- public inputs, validated before the machine -------------------------
    def bad_bytes(self, error):
        """The subchannel's bytes do not make records (``_framing``): a
        protocol error, as a bad record."""
        return self._got_bad(error)

    def got_record(self, raw):
        """One record: parsed, then given to the machine as what it is (an
        offer or header, file data, an acknowledgement); what each means
        is the state's to say (an offer, the next file's header, the
        answer to our resume request; data to write, or data where none
        may come)."""
        try:
            data = M.file_data(raw)
            record = M.parse_record(raw) if data is None else None
        except M.MessageError as e:
            return self._got_bad(e)
        # the state's own path for each kind (the class's _paths rows)
        if data is not None:
            return self._on_data(data)
        if isinstance(record, (M.FileOffer, M.DirectoryOffer, M.StreamOffer)):
            return self._on_announcement(record)
        if isinstance(record, M.FileAcknowledge):
            return self._on_ack(record)
        if isinstance(record, M.OfferReject) and isinstance(self._offer, M.StreamOffer):
            # the "stream" feature: the offering side ends its stream
            # early, saying why (its input failed: docs/transfer-v2.md
            # "Streams"); meaningful only while the stream goes
            return self._got_abort(record.reason)
        return self._got_bad(M.MessageError(
            f"unexpected {type(record).__name__} from the offering side"))

    def _check_header(self, header):
        path = self._remaining[0]
        if not isinstance(header, M.FileOffer) or header.filename != path[-1]:
            return self._got_bad(M.MessageError(
                f"expected the header of {'/'.join(path)!r}, got {header!r}"))
        if self._announced + header.bytes > self._offer.size:
            return self._got_bad(M.MessageError(
                "the files are larger than the directory offer announced"))
        try:
            writer = self._sink.open_file(path, header)
        except (OSError, TransferError) as e:
            return self.cancel(f"cannot write {'/'.join(path)!r}: {e}")
        self._announced += header.bytes
        self._remaining.pop(0)
        if writer.received:  # the partial file, after the changed ones came again
            self._held += writer.received
            self._delegate.resumed(self._held)
        self._delegate.file_started(path, header.bytes, writer.received)
        return self._got_header(path, writer)

    def _check_resume_header(self, header):
        """The offering side's answer to our resume: the same file, from our
        offset (its prefix matched) or from 0 (it did not); in a directory
        the header of the first file it sends, after the files we hold
        (``skip``) or from the first."""
        held = self._sink.resume
        offer = self._offer
        if (isinstance(offer, M.DirectoryOffer) and isinstance(header, M.FileOffer)
                and header.resend is not None):
            return self._check_keeping_answer(header, held)
        if isinstance(offer, M.DirectoryOffer):
            ok = (isinstance(header, M.FileOffer)
                  and (header.skip, header.offset) in ((0, 0), (held.files, held.offset))
                  and header.filename == offer.files[header.skip][-1])
        else:
            ok = (isinstance(header, M.FileOffer) and header.skip is None
                  and header.offset in (0, held.offset)
                  and (header.filename, header.bytes, header.timestamp)
                  == (offer.filename, offer.bytes, offer.timestamp))
        if not ok:
            return self._got_bad(M.MessageError(
                f"expected the answer to our resume at byte {held.offset}, got {header!r}"))
        if isinstance(offer, M.DirectoryOffer):
            kept = self._sink.kept_bytes if header.skip else 0
            if kept + header.bytes > offer.size:
                return self._got_bad(M.MessageError(
                    "the files are larger than the directory offer announced"))
            self._remaining = [tuple(p) for p in offer.files[header.skip + 1:]]
            self._announced = kept + header.bytes
            self._totals = [header.skip, kept]
        try:
            writer = self._sink.open_resumed(header)
        except (OSError, TransferError) as e:
            return self.cancel(f"cannot write the file: {e}")
        self._held = (self._totals[1] if isinstance(offer, M.DirectoryOffer) else 0) \
            + writer.received
        self._delegate.resumed(self._held)
        if isinstance(offer, M.DirectoryOffer):
            self._delegate.file_started(tuple(offer.files[header.skip]), header.bytes,
                                        writer.received)
        return self._got_resume_header(writer)

    def _check_keeping_answer(self, header, held):
        """The answer of a sender that read our kept files' digests: it
        keeps the first ``skip`` files except ``resend`` (sent first, from
        byte 0), then sends the rest from file ``skip`` (at our offset, or
        from 0 when its start differs)."""
        offer = self._offer
        first = header.resend[0] if header.resend else header.skip
        if (header.skip != held.files
                or header.filename != offer.files[first][-1]
                or header.offset not in ((0,) if header.resend else (0, held.offset))):
            return self._got_bad(M.MessageError(
                f"expected the answer to our resume after {held.files} files, got {header!r}"))
        again = set(header.resend)
        kept = [i for i in range(header.skip) if i not in again]
        kept_bytes = sum(held.sizes[i] for i in kept)
        if kept_bytes + header.bytes > offer.size:
            return self._got_bad(M.MessageError(
                "the files are larger than the directory offer announced"))
        order = list(header.resend) + list(range(header.skip, len(offer.files)))
        self._remaining = [tuple(offer.files[i]) for i in order[1:]]
        self._announced = kept_bytes + header.bytes
        self._totals = [len(kept), kept_bytes]
        try:
            writer = self._sink.open_resumed(header)
        except (OSError, TransferError) as e:
            return self.cancel(f"cannot write the file: {e}")
        self._held = kept_bytes + writer.received
        self._delegate.resumed(self._held)
        self._delegate.file_started(tuple(offer.files[first]), header.bytes, writer.received)
        return self._got_resume_header(writer)

    def _check_ack(self, theirs):
        w = self._writer
        ours = M.FileAcknowledge(w.received, w.digest())
        # a stream (expected None) is as long as the sender's end says
        if ours != theirs or (w.expected is not None and w.received != w.expected):
            return self._got_mismatch(ours, theirs)
        # verified: give it its final name (and the folder, after its last file)
        try:
            w.commit()
            if not self._remaining:
                self._sink.complete()
        except (OSError, TransferError) as e:
            return self._keep_failed(ours, f"{e}")
        if self._remaining:
            return self._got_ack_more(ours)
        return self._got_ack_last(ours)

    def accept(self, sink):
        """Receive into ``sink`` (an ISink); a resumable one (IResumableSink)
        first checks what an earlier session left. Once the offer was
        answered, OfferAlreadyAnswered while it goes on; after its end
        the sink is given back (``suspend``)."""
        return self._given_sink(ISink(sink))

    def _use_sink(self, sink):
        if IResumableSink.providedBy(sink):
            return self._check_kept_first(sink)
        return self._answer_with(sink)

    def _kept_checked(self, _):
        self._checking = None
        self._answer_with(self._sink)

    def _kept_check_failed(self, f):
        self._checking = None
        if not f.check(CancelledError):  # cancelled: the offer is over already
            self.reject(f"cannot check the bytes kept from an earlier transfer: "
                        f"{f.getErrorMessage()}")

    def _answer_with(self, sink):
        resume = sink.resume if IResumableSink.providedBy(sink) else None
        if resume is not None:
            return self._accept_resuming(sink, resume)
        if isinstance(self._offer, M.DirectoryOffer):
            self._remaining = [tuple(p) for p in self._offer.files]
            if not self._remaining:
                return self._accept_empty(sink)
            return self._accept_directory(sink)
        try:
            writer = sink.open_file((self._offer.filename,), self._offer)
        except (OSError, TransferError) as e:
            sink.abort()
            return self.reject(f"cannot write the file: {e}")
        return self._accept_file(sink, writer)

    # -- machine --------------------------------------------------------------
    @m.state(initial=True)
    def R0_awaiting_offer(self): pass  # noqa

    @m.state()
    def R1_deciding(self): pass  # noqa

    @m.state()
    def R2_awaiting_header(self): pass  # noqa

    @m.state()
    def R3_receiving(self): pass  # noqa

    @m.state()
    def R4_awaiting_close(self): pass  # noqa

    @m.state()
    def R5_done(self): pass  # noqa

    @m.state()
    def R6_awaiting_resume_answer(self): pass  # noqa

    @m.state()
    def R7_checking_kept(self): pass  # noqa

    @m.input()
    def _check_kept_first(self, sink): pass  # noqa

    @m.input()
    def _accept_resuming(self, sink, held): pass  # noqa

    @m.input()
    def _got_resume_header(self, writer): pass  # noqa

    @m.input()
    def _got_offer(self, offer): pass  # noqa

    @m.input()
    def _got_header(self, path, writer): pass  # noqa

    @m.input()
    def _got_data(self, data): pass  # noqa

    @m.input()
    def _got_announcement(self, record): pass  # noqa

    @m.input()
    def _got_ack(self, theirs): pass  # noqa

    @m.input()
    def _got_ack_more(self, ours): pass  # noqa

    @m.input()
    def _got_ack_last(self, ours): pass  # noqa

    @m.input()
    def _got_mismatch(self, ours, theirs): pass  # noqa

    @m.input()
    def _got_bad(self, error): pass  # noqa

    @m.input()
    def _keep_failed(self, ours, why): pass  # noqa

    @m.input()
    def _accept_file(self, sink, writer): pass  # noqa

    @m.input()
    def _accept_directory(self, sink): pass  # noqa

    @m.input()
    def _accept_empty(self, sink): pass  # noqa

    @m.input()
    def reject(self, reason): pass  # noqa

    @m.input()
    def _given_sink(self, sink): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def _got_abort(self, reason): pass  # noqa

    @m.input()
    def cancel(self, reason): pass  # noqa

    @m.output()
    def _remember_and_ask(self, offer):
        self._offer = offer
        self._delegate.ask(offer)

    @m.output()
    def _send_accept(self, sink):
        self._sink = sink
        self._channel.write(M.encode_record(M.OfferAccept()))
        self._delegate.accepted()

    @m.output()
    def _start_check(self, sink):
        self._sink = sink
        self._checking = self._run_hashing(sink.check_kept)
        self._checking.addCallbacks(self._kept_checked, self._kept_check_failed)

    @m.output()
    def _stop_check(self):
        # the thread stops at its next chunk; its result is dropped
        if self._checking is not None:
            self._checking.cancel()

    @m.output()
    def _send_resume_accept(self, sink, held):
        self._sink = sink
        self._channel.write(M.encode_record(held.request()))
        self._delegate.accepted()

    # lost or cancelled: a resumable file or folder keeps what arrived for a
    # later session; anything else is deleted (the file being received, in
    # R3_receiving, first)
    @m.output()
    def _suspend_file(self):
        self._writer.suspend()
        self._writer = None

    @m.output()
    def _suspend(self):
        self._sink.suspend()

    @m.output()
    def _use_writer(self, writer):
        self._writer = writer

    # what a record means in this state (each may feed the input it turns
    # out to be: Automat is in the new state when its outputs run)
    def _write_now(self, data):
        """R3_receiving's path for file data (its row): to the file."""
        w = self._writer
        if w.expected is not None and w.received + len(data) > w.expected:
            return self._got_bad(M.MessageError(
                f"the sender sent more than the {w.expected} bytes it announced"))
        try:
            w.write(data)
        except OSError as e:
            return self.cancel(f"cannot write the received file: {e.strerror or e}")
        self._delegate.progress(len(data))

    @m.output()
    def _stray_data(self, data):
        self._got_bad(M.MessageError("file data outside of a file"))

    @m.output()
    def _stray_ack(self, theirs):
        self._got_bad(M.MessageError("a FileAcknowledge before any file data"))

    @m.output()
    def _as_offer(self, record):
        self._got_offer(record)

    @m.output()
    def _as_resume_answer(self, record):
        self._check_resume_header(record)

    @m.output()
    def _as_early(self, record):
        self._got_bad(M.MessageError(
            f"{type(record).__name__} before the file being received ended"))

    @m.output()
    def _send_our_ack(self, ours):
        self._channel.write(M.encode_record(ours))

    @m.output()
    def _keep_file(self, ours):
        self._writer = None
        self._totals[0] += 1
        self._totals[1] += ours.bytes

    @m.output()
    def _complete_empty(self):
        self._sink.complete()

    @m.output()
    def _take_sink(self, sink):
        # decided: the answer is the input this sink makes (an accept of
        # some kind, or a reject when its file cannot be opened)
        self._use_sink(sink)

    @m.output()
    def _already_answered(self):
        raise OfferAlreadyAnswered("this offer was answered already; the first "
                                   "answer stands")

    @m.output()
    def _send_reject(self, reason):
        self._channel.write(M.encode_record(M.OfferReject(reason)))

    @m.output()
    def _send_cancel(self, reason):
        # our answer to the spec's "XXX what if Bob clicks cancel": an
        # OfferReject after the accept (docs/transfer-v2.md)
        self._channel.write(M.encode_record(M.OfferReject(reason)))

    # a failure: everything the offer made is deleted (the file being
    # received, in R3_receiving, first)
    @m.output()
    def _discard_file(self):
        self._writer.abort()
        self._writer = None

    @m.output()
    def _discard(self):
        self._sink.abort()

    @m.output()
    def _discard_given_sink(self, sink):
        sink.suspend()  # a resumable sink keeps what an earlier session left

    @m.output()
    def _discard_writer(self, writer):
        writer.abort()

    @m.output()
    def _close_subchannel(self):
        self._channel.close()

    @m.output()
    def _succeed(self):
        self._delegate.finished(Received(self._offer, self._sink.final_path, *self._totals))

    @m.output()
    def _finish_rejected(self, reason):
        self._delegate.finished(Rejected(self._offer, reason))

    @m.output()
    def _fail_bad(self, error):
        self._delegate.finished(ReceiveFailed(f"protocol error from the offering side: {error}"))

    @m.output()
    def _fail_mismatch(self, ours, theirs):
        # a stream's bytes went to its consumer as they came: nothing to delete
        fate = ("they were written as they came and cannot be taken back"
                if isinstance(self._offer, M.StreamOffer)
                else "the received bytes were deleted")
        self._delegate.finished(HashMismatch(
            f"the received bytes do not match: we got {ours.bytes} bytes with hash "
            f"{ours.hash.hex()}, the sender sent {theirs.bytes} bytes with hash "
            f"{theirs.hash.hex()}; {fate}"))

    @m.output()
    def _fail_aborted(self, reason):
        self._delegate.finished(StreamAborted(
            f"the sender stopped the stream: {reason}"))

    @m.output()
    def _stray_abort(self, reason):
        self._got_bad(M.MessageError("an OfferReject from the offering side outside "
                                     "of its stream"))

    @m.output()
    def _fail_second_offer(self, offer):
        self._delegate.finished(ReceiveFailed("protocol error from the offering side: "
                                     "a second offer on the same subchannel"))

    @m.output()
    def _fail_keep(self, why):
        self._delegate.finished(ReceiveFailed(f"the verified file could not be kept: {why}"))

    @m.output()
    def _fail_lost(self):
        self._delegate.finished(ReceiveFailed("the connection for this offer closed before "
                                     "it completed"))

    @m.output()
    def _fail_cancelled(self, reason):
        self._delegate.finished(ReceiveFailed(f"cancelled: {reason}"))

    # the per-record paths of each state (module docstring): a record
    # kind either feeds its input, or, where the input only looped back
    # to the same state with one output, goes to that work directly
    _inputs = {"_on_data": lambda s: s._got_data,
               "_on_announcement": lambda s: s._got_announcement,
               "_on_ack": lambda s: s._got_ack}
    _paths = StatePaths(m, {
        "R0_awaiting_offer": _inputs,
        "R1_deciding": _inputs,
        # the next file's header, checked (it feeds _got_header or _got_bad)
        "R2_awaiting_header": dict(_inputs, _on_announcement=lambda s: s._check_header),
        # data to the file, the sender's FileAcknowledge to its check (which
        # feeds _got_ack_more, _got_ack_last, _got_mismatch or _keep_failed)
        "R3_receiving": dict(_inputs, _on_data=lambda s: s._write_now,
                             _on_ack=lambda s: s._check_ack),
        "R4_awaiting_close": _inputs,
        "R5_done": _inputs,
        "R6_awaiting_resume_answer": _inputs,
        "R7_checking_kept": _inputs,
    })
    del _inputs

    _paths.upon(R0_awaiting_offer, _got_offer, R1_deciding, [_remember_and_ask])
    _paths.upon(R0_awaiting_offer, _got_bad, R5_done, [_close_subchannel, _fail_bad])
    _paths.upon(R0_awaiting_offer, lost, R5_done, [_fail_lost])
    _paths.upon(R0_awaiting_offer, cancel, R5_done, [_close_subchannel, _fail_cancelled])

    _paths.upon(R1_deciding, _accept_file, R3_receiving, [_send_accept, _use_writer])
    _paths.upon(R1_deciding, _accept_directory, R2_awaiting_header, [_send_accept])
    _paths.upon(R1_deciding, _accept_empty, R4_awaiting_close, [_send_accept, _complete_empty])
    _paths.upon(R1_deciding, reject, R5_done, [_send_reject, _finish_rejected])
    _paths.upon(R1_deciding, _got_offer, R5_done, [_close_subchannel, _fail_second_offer])
    _paths.upon(R1_deciding, _got_bad, R5_done, [_close_subchannel, _fail_bad])
    _paths.upon(R1_deciding, lost, R5_done, [_fail_lost])
    _paths.upon(R1_deciding, cancel, R5_done, [_send_reject, _finish_rejected])

    _paths.upon(R1_deciding, _accept_resuming, R6_awaiting_resume_answer, [_send_resume_accept])

    # our answer waits until what an earlier session left is checked
    _paths.upon(R1_deciding, _check_kept_first, R7_checking_kept, [_start_check])
    _paths.upon(R7_checking_kept, _accept_file, R3_receiving, [_send_accept, _use_writer])
    _paths.upon(R7_checking_kept, _accept_directory, R2_awaiting_header, [_send_accept])
    _paths.upon(R7_checking_kept, _accept_resuming, R6_awaiting_resume_answer,
                [_send_resume_accept])
    # (a sink whose file cannot be opened was aborted already; else it keeps its bytes)
    _paths.upon(R7_checking_kept, reject, R5_done, [_send_reject, _suspend, _finish_rejected])
    _paths.upon(R7_checking_kept, _got_offer, R5_done,
                [_stop_check, _suspend, _close_subchannel, _fail_second_offer])
    _paths.upon(R7_checking_kept, _got_bad, R5_done,
                [_stop_check, _suspend, _close_subchannel, _fail_bad])
    _paths.upon(R7_checking_kept, lost, R5_done, [_stop_check, _suspend, _fail_lost])
    _paths.upon(R7_checking_kept, cancel, R5_done,
                [_stop_check, _send_reject, _suspend, _finish_rejected])

    _paths.upon(R6_awaiting_resume_answer, _got_resume_header, R3_receiving, [_use_writer])
    _paths.upon(R6_awaiting_resume_answer, _got_bad, R5_done,
                [_suspend, _close_subchannel, _fail_bad])
    _paths.upon(R6_awaiting_resume_answer, lost, R5_done, [_suspend, _fail_lost])
    _paths.upon(R6_awaiting_resume_answer, cancel, R5_done,
                [_send_cancel, _suspend, _fail_cancelled])

    _paths.upon(R2_awaiting_header, _got_header, R3_receiving, [_use_writer])
    _paths.upon(R2_awaiting_header, _got_bad, R5_done, [_discard, _close_subchannel, _fail_bad])
    _paths.upon(R2_awaiting_header, lost, R5_done, [_suspend, _fail_lost])
    _paths.upon(R2_awaiting_header, cancel, R5_done, [_send_cancel, _suspend, _fail_cancelled])

    _paths.upon(R3_receiving, _got_announcement, R3_receiving, [_as_early])
    _paths.upon(R3_receiving, _got_ack_more, R2_awaiting_header, [_send_our_ack, _keep_file])
    _paths.upon(R3_receiving, _got_ack_last, R4_awaiting_close, [_send_our_ack, _keep_file])
    _paths.upon(R3_receiving, _got_mismatch, R5_done,
                [_send_our_ack, _discard_file, _discard, _close_subchannel,
                 _fail_mismatch])
    _paths.upon(R3_receiving, _keep_failed, R5_done,
                [_send_our_ack, _discard_file, _discard, _close_subchannel,
                 _fail_keep])
    _paths.upon(R3_receiving, _got_bad, R5_done,
                [_discard_file, _discard, _close_subchannel, _fail_bad])
    _paths.upon(R3_receiving, lost, R5_done, [_suspend_file, _suspend, _fail_lost])
    _paths.upon(R3_receiving, _got_abort, R5_done,
                [_discard_file, _discard, _close_subchannel, _fail_aborted])
    # (only a stream offer's sender may end it with an OfferReject)
    for _state in (R0_awaiting_offer, R1_deciding, R2_awaiting_header, R4_awaiting_close,
                   R6_awaiting_resume_answer, R7_checking_kept):
        _paths.upon(_state, _got_abort, _state, [_stray_abort])
    _paths.upon(R3_receiving, cancel, R5_done,
                [_send_cancel, _suspend_file, _suspend, _fail_cancelled])

    # everything is verified and in place: the offering side closes
    _paths.upon(R4_awaiting_close, lost, R5_done, [_succeed])
    _paths.upon(R4_awaiting_close, _got_offer, R5_done, [_close_subchannel, _succeed])
    _paths.upon(R4_awaiting_close, _got_bad, R5_done, [_close_subchannel, _succeed])
    _paths.upon(R4_awaiting_close, cancel, R5_done, [_close_subchannel, _succeed])

    # what a record is, by state: an offer, the answer to our resume
    # request (a header: R2's row); data and acknowledgements only while
    # receiving (R3's row)
    _paths.upon(R0_awaiting_offer, _got_announcement, R0_awaiting_offer, [_as_offer])
    _paths.upon(R6_awaiting_resume_answer, _got_announcement, R6_awaiting_resume_answer,
                [_as_resume_answer])
    for _state in (R1_deciding, R7_checking_kept, R4_awaiting_close):
        _paths.upon(_state, _got_announcement, _state, [_as_offer])
    for _state in (R0_awaiting_offer, R1_deciding, R2_awaiting_header, R4_awaiting_close,
                   R6_awaiting_resume_answer, R7_checking_kept):
        _paths.upon(_state, _got_data, _state, [_stray_data])
        _paths.upon(_state, _got_ack, _state, [_stray_ack])
    del _state

    # the application's answer (docs/transfer-v2.md, "Library API"): taken
    # while deciding; a second one while the offer goes on is refused
    # with a clear error, the first answer standing (R0: no IncomingOffer
    # exists before the offer, so no answer can come)
    _paths.upon(R1_deciding, _given_sink, R1_deciding, [_take_sink])
    for _state in (R2_awaiting_header, R3_receiving, R4_awaiting_close,
                   R6_awaiting_resume_answer, R7_checking_kept):
        _paths.upon(_state, _given_sink, _state, [_already_answered])
    for _state in (R2_awaiting_header, R3_receiving, R4_awaiting_close,
                   R6_awaiting_resume_answer):
        _paths.upon(_state, reject, _state, [_already_answered])
    del _state
    _paths.upon(R5_done, _given_sink, R5_done, [_discard_given_sink])

    # over: a decision that comes late gives its sink back; the rest is noise
    _paths.upon(R5_done, _accept_file, R5_done, [_discard_writer, _discard_given_sink])
    _paths.upon(R5_done, _accept_directory, R5_done, [_discard_given_sink])
    _paths.upon(R5_done, _accept_empty, R5_done, [_discard_given_sink])
    _paths.upon(R5_done, _accept_resuming, R5_done, [_discard_given_sink])
    _paths.upon(R5_done, _check_kept_first, R5_done, [_discard_given_sink])
    _paths.upon(R5_done, _got_header, R5_done, [_discard_writer])
    for _input in (_got_offer, _got_bad, reject, lost, cancel, _got_data, _got_ack,
                   _got_announcement, _got_abort):
        _paths.upon(R5_done, _input, R5_done, [])
    del _input


index_transitions(OfferReceiver.m)
