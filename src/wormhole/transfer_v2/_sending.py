"""The offering side of one offer
(Dilated File Transfer, "Making an Offer"): an Automat machine per offer
subchannel.

We open the subchannel and send the offer; the peer answers OfferAccept
or OfferReject. After an accept the files stream (a ``Streamer``); after
each file we send our FileAcknowledge and the peer sends its own, which
must carry the same size and hash. When every file is sent and every
acknowledgement matched, we close the subchannel (the offering side
opens and closes it). An OfferReject after the accept is the receiver
cancelling (the spec's "XXX what if Bob clicks cancel", our answer in
docs/transfer-v2.md).

Neighbours are wired once (``wire``): the subchannel (``IOfferChannel``:
``write(record)``, ``close()``) and our side (``IOfferSenderDelegate``):
``start_streaming(resume)`` (returns an object with ``stop()``),
``finished(result)``: an ``OfferResult`` or an exception, and, when the
machine was made ``resumable`` (both declared the "resume" feature),
``check_resume(accept)``, which returns a Deferred of
the (ResumePoint, why) for an accept that asks to resume: it hashes the
kept bytes away from the reactor (``_hashing``), and the machine waits
for it in S1b_checking_resume (cancelled when the offer ends first).
"""
import attr
from automat import MethodicalMachine
from twisted.internet.defer import CancelledError
from zope.interface import implementer

from .._automat_private import bind_inputs, index_transitions, trace_hook
from ..errors import TransferError
from . import _messages as M
from ._interfaces import IOfferChannel, IOfferSender, IOfferSenderDelegate


class OfferRejected(TransferError):
    """The peer rejected (or cancelled) our offer; ``reason`` is theirs."""

    def __init__(self, reason):
        super().__init__(f"the peer rejected the offer: {reason}")
        self.reason = reason


class AcknowledgeMismatch(TransferError):
    """The peer's FileAcknowledge does not match what we sent."""


class OfferLost(TransferError):
    """The subchannel closed before the offer completed."""


@attr.s(frozen=True)
class OfferResult:
    """A completed offer: how many files and bytes the peer confirmed (for
    a resumed offer, also the ones it kept from an earlier session), how
    many of the offer's bytes the receiver already held (0: all of it was
    sent; for a file the byte its data started at), how many whole files of
    a directory it held, and why a resume it asked for was refused, in
    whole or in part (kept files that changed and were sent again; None)."""
    files = attr.ib()
    bytes = attr.ib()
    resumed_from = attr.ib(default=0)
    resumed_files = attr.ib(default=0)
    resume_refused = attr.ib(default=None)


@implementer(IOfferSender)
class OfferSender:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, offer, resumable=False):
        self._offer = offer
        # the "resume" feature, when both declared it: the delegate's
        # check_resume(accept) checks an accept that asks to resume
        # against our files and fires with (_source.ResumePoint, None) or
        # (_source.FROM_START, why); without it such an accept is plain
        self._resumable = resumable
        self._checking = None  # that Deferred, while it runs
        self._channel = None
        self._delegate = None
        # fed once or twice per file (_automat_private)
        bind_inputs(self, ("_file_sent", "_got_ack"))
        self._streamer = None
        self._unacknowledged = []  # FileAcknowledge we sent, the peer's pending
        self._confirmed = [0, 0]   # files, bytes
        self._resumed = (0, 0, None)  # bytes and files held, why not resumed

    def wire(self, channel, delegate):
        """Once, before ``connected``: the offer subchannel (an
        IOfferChannel) and our side of the offer (an IOfferSenderDelegate)."""
        self._channel = IOfferChannel(channel)
        self._delegate = IOfferSenderDelegate(delegate)

    # -- public inputs, validated before the machine -------------------------
    def bad_bytes(self, error):
        """The subchannel's bytes do not make records (``_framing``): a
        protocol error, as a bad record."""
        return self._got_bad(error)

    def got_record(self, raw):
        try:
            record = M.parse_record(raw)
        except M.MessageError as e:
            return self._got_bad(e)
        if isinstance(record, M.OfferAccept):
            if record.resume_offset is not None and self._resumable:
                return self._got_accept_resuming(record)
            return self._got_accept()
        if isinstance(record, M.OfferReject):
            return self._got_reject(record.reason)
        if isinstance(record, M.FileAcknowledge):
            if not self._unacknowledged:
                return self._got_bad(M.MessageError(
                    "the peer acknowledged a file we have not finished sending"))
            expected = self._unacknowledged.pop(0)
            if record != expected:
                return self._got_mismatch(expected, record)
            self._confirmed[0] += 1
            self._confirmed[1] += record.bytes
            if self._unacknowledged:
                return self._got_ack()
            return self._got_ack_caught_up()
        return self._got_bad(M.MessageError(
            f"unexpected {type(record).__name__} from the receiving side"))

    def file_sent(self, size, digest):
        self._unacknowledged.append(M.FileAcknowledge(size, digest))
        self._file_sent(size, digest)

    def all_sent(self):
        """The Streamer sent every file (a folder with no file: none)."""
        if self._unacknowledged:
            return self._all_sent()
        return self._all_sent_nothing_pending()

    # -- machine --------------------------------------------------------------
    @m.state(initial=True)
    def S0_opening(self): pass  # noqa

    @m.state()
    def S1_offered(self): pass  # noqa

    @m.state()
    def S1b_checking_resume(self): pass  # noqa

    @m.state()
    def S2_sending(self): pass  # noqa

    @m.state()
    def S3_awaiting_acks(self): pass  # noqa

    @m.state()
    def S4_done(self): pass  # noqa

    @m.input()
    def connected(self): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def cancel(self, reason): pass  # noqa

    @m.input()
    def _got_accept(self): pass  # noqa

    @m.input()
    def _got_accept_resuming(self, accept): pass  # noqa

    @m.input()
    def _resume_checked(self, point, why): pass  # noqa

    @m.input()
    def _got_reject(self, reason): pass  # noqa

    @m.input()
    def _got_bad(self, error): pass  # noqa

    @m.input()
    def _got_ack(self): pass  # noqa

    @m.input()
    def _got_ack_caught_up(self): pass  # noqa

    @m.input()
    def _got_mismatch(self, expected, got): pass  # noqa

    @m.input()
    def _file_sent(self, size, digest): pass  # noqa

    @m.input()
    def _all_sent(self): pass  # noqa

    @m.input()
    def _all_sent_nothing_pending(self): pass  # noqa

    @m.input()
    def source_failed(self, error): pass  # noqa

    @m.input()
    def input_failed(self, error):
        """A stream's input failed or ended early (the "stream" feature):
        the receiver is told why (docs/transfer-v2.md "Streams")."""

    @m.output()
    def _send_offer(self):
        self._channel.write(M.encode_record(self._offer))

    @m.output()
    def _stream(self):
        self._streamer = self._delegate.start_streaming(None)

    @m.output()
    def _start_check(self, accept):
        self._checking = self._delegate.check_resume(accept)
        self._checking.addCallbacks(self._checked, self._check_failed)

    def _checked(self, point_why):
        self._checking = None
        self._resume_checked(*point_why)

    def _check_failed(self, f):
        self._checking = None
        if not f.check(CancelledError):  # cancelled: the offer is over already
            self.source_failed(f.value)

    @m.output()
    def _stop_checking(self):
        # the thread stops at its next chunk; its result is dropped
        if self._checking is not None:
            self._checking.cancel()

    @m.output()
    def _answer_resume(self, point, why):
        # the resume feature's answer: a header with the offset (the
        # Streamer sends it for a directory, on its first file's header)
        self._resumed = (point.held, point.kept_files, why)
        self._confirmed = [point.kept_files, point.held - point.offset]
        if isinstance(self._offer, M.FileOffer):
            self._channel.write(M.encode_record(attr.evolve(self._offer, offset=point.offset)))

    @m.output()
    def _stream_from(self, point, why):
        self._streamer = self._delegate.start_streaming(point)

    @m.output()
    def _stop_streaming(self):
        self._streamer.stop()

    @m.output()
    def _send_ack(self, size, digest):
        self._channel.write(M.encode_record(M.FileAcknowledge(size, digest)))

    @m.output()
    def _send_stream_end(self, error):
        # the "stream" feature's early end: an OfferReject from the
        # offering side, with the reason, before the close
        self._channel.write(M.encode_record(M.OfferReject(str(error))))

    @m.output()
    def _close_subchannel(self):
        self._channel.close()

    @m.output()
    def _succeed(self):
        self._delegate.finished(OfferResult(*self._confirmed, *self._resumed))

    @m.output()
    def _fail_rejected(self, reason):
        self._delegate.finished(OfferRejected(reason))

    @m.output()
    def _fail_bad(self, error):
        self._delegate.finished(error)

    @m.output()
    def _fail_mismatch(self, expected, got):
        self._delegate.finished(AcknowledgeMismatch(
            f"the peer received different bytes: {got.bytes} bytes with hash "
            f"{got.hash.hex()}, where we sent {expected.bytes} bytes with hash "
            f"{expected.hash.hex()}"))

    @m.output()
    def _fail_second_accept(self):
        self._delegate.finished(M.MessageError("the peer accepted the same offer twice"))

    @m.output()
    def _fail_lost(self):
        self._delegate.finished(
            OfferLost("the connection for this offer closed before it completed"))

    @m.output()
    def _fail_cancelled(self, reason):
        self._delegate.finished(OfferLost(f"offer cancelled: {reason}"))

    @m.output()
    def _fail_source(self, error):
        self._delegate.finished(error)

    S0_opening.upon(connected, enter=S1_offered, outputs=[_send_offer])
    S0_opening.upon(lost, enter=S4_done, outputs=[_fail_lost])
    S0_opening.upon(cancel, enter=S4_done, outputs=[_close_subchannel, _fail_cancelled])

    S1_offered.upon(_got_accept, enter=S2_sending, outputs=[_stream])
    S1_offered.upon(_got_accept_resuming, enter=S1b_checking_resume, outputs=[_start_check])
    S1_offered.upon(_got_reject, enter=S4_done, outputs=[_close_subchannel, _fail_rejected])
    S1_offered.upon(_got_bad, enter=S4_done, outputs=[_close_subchannel, _fail_bad])
    S1_offered.upon(lost, enter=S4_done, outputs=[_fail_lost])
    S1_offered.upon(cancel, enter=S4_done, outputs=[_close_subchannel, _fail_cancelled])

    # the receiver waits for our answer while we hash what it kept
    S1b_checking_resume.upon(_resume_checked, enter=S2_sending,
                             outputs=[_answer_resume, _stream_from])
    S1b_checking_resume.upon(source_failed, enter=S4_done,
                             outputs=[_close_subchannel, _fail_source])
    S1b_checking_resume.upon(_got_reject, enter=S4_done,
                             outputs=[_stop_checking, _close_subchannel, _fail_rejected])
    S1b_checking_resume.upon(_got_bad, enter=S4_done,
                             outputs=[_stop_checking, _close_subchannel, _fail_bad])
    for _input in (_got_accept, _got_accept_resuming):
        S1b_checking_resume.upon(_input, enter=S4_done,
                                 outputs=[_stop_checking, _close_subchannel, _fail_second_accept])
    S1b_checking_resume.upon(lost, enter=S4_done, outputs=[_stop_checking, _fail_lost])
    S1b_checking_resume.upon(cancel, enter=S4_done,
                             outputs=[_stop_checking, _close_subchannel, _fail_cancelled])

    S2_sending.upon(_file_sent, enter=S2_sending, outputs=[_send_ack])
    S2_sending.upon(_all_sent, enter=S3_awaiting_acks, outputs=[])
    # no file in the offer (a folder of empty folders): nothing to acknowledge
    S2_sending.upon(_all_sent_nothing_pending, enter=S4_done,
                    outputs=[_close_subchannel, _succeed])
    S2_sending.upon(_got_ack, enter=S2_sending, outputs=[])
    S2_sending.upon(_got_ack_caught_up, enter=S2_sending, outputs=[])
    S2_sending.upon(_got_mismatch, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_mismatch])
    S2_sending.upon(_got_reject, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_rejected])
    S2_sending.upon(_got_bad, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_bad])
    S2_sending.upon(_got_accept, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_second_accept])
    S2_sending.upon(_got_accept_resuming, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_second_accept])
    S2_sending.upon(source_failed, enter=S4_done, outputs=[_close_subchannel, _fail_source])
    S2_sending.upon(input_failed, enter=S4_done,
                    outputs=[_send_stream_end, _close_subchannel, _fail_source])
    S2_sending.upon(lost, enter=S4_done, outputs=[_stop_streaming, _fail_lost])
    S2_sending.upon(cancel, enter=S4_done,
                    outputs=[_stop_streaming, _close_subchannel, _fail_cancelled])

    S3_awaiting_acks.upon(_got_ack, enter=S3_awaiting_acks, outputs=[])
    S3_awaiting_acks.upon(_got_ack_caught_up, enter=S4_done,
                          outputs=[_close_subchannel, _succeed])
    S3_awaiting_acks.upon(_got_mismatch, enter=S4_done,
                          outputs=[_close_subchannel, _fail_mismatch])
    S3_awaiting_acks.upon(_got_reject, enter=S4_done,
                          outputs=[_close_subchannel, _fail_rejected])
    S3_awaiting_acks.upon(_got_bad, enter=S4_done, outputs=[_close_subchannel, _fail_bad])
    S3_awaiting_acks.upon(_got_accept, enter=S4_done,
                          outputs=[_close_subchannel, _fail_second_accept])
    S3_awaiting_acks.upon(_got_accept_resuming, enter=S4_done,
                          outputs=[_close_subchannel, _fail_second_accept])
    S3_awaiting_acks.upon(lost, enter=S4_done, outputs=[_fail_lost])
    S3_awaiting_acks.upon(cancel, enter=S4_done, outputs=[_close_subchannel, _fail_cancelled])

    # the offer is over: late records and the close we caused change nothing
    for _input in (connected, lost, _got_accept, _got_accept_resuming, _got_reject, _got_bad,
                   _got_ack, _got_ack_caught_up, _got_mismatch, _file_sent, _all_sent,
                   _all_sent_nothing_pending, source_failed, _resume_checked, input_failed):
        S4_done.upon(_input, enter=S4_done, outputs=[])
    S4_done.upon(cancel, enter=S4_done, outputs=[])
    del _input


index_transitions(OfferSender.m)
