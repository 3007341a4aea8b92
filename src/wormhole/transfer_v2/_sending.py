"""The offering side of one offer (spec "Making an Offer"): an Automat
machine per offer subchannel.

We open the subchannel and send the offer; the peer answers OfferAccept
or OfferReject. After an accept the files stream (a ``Streamer``); after
each file we send our FileAcknowledge and the peer sends its own, which
must carry the same size and hash. When every file is sent and every
acknowledgement matched, we close the subchannel (the offering side
opens and closes it). An OfferReject after the accept is the receiver
cancelling (the spec's "XXX what if Bob clicks cancel", our answer in
docs/transfer-v2.md).

Neighbours come in at construction: ``write(record)`` and ``close()`` on
the subchannel, ``start_streaming()`` (returns an object with ``stop()``)
and ``finished(result)``: an ``OfferResult`` or an exception.
"""
import attr
from automat import MethodicalMachine

from ..errors import TransferError
from . import _messages as M


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
    """A completed offer: how many files and bytes the peer confirmed, and
    the byte a resumed file's data started at (0: all of it was sent)."""
    files = attr.ib()
    bytes = attr.ib()
    resumed_from = attr.ib(default=0)


class OfferSender:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self, offer, write, close, start_streaming, finished, prefix_hasher=None):
        self._offer = offer
        # the "resume" feature, when both declared it: prefix_hasher(n) is
        # the BLAKE2b state after our file's first n bytes, or None
        self._prefix_hasher = prefix_hasher
        self._write = write
        self._close = close
        self._start_streaming = start_streaming
        self._finished = finished
        self._streamer = None
        self._unacknowledged = []  # FileAcknowledge we sent, the peer's pending
        self._confirmed = [0, 0]   # files, bytes
        self._resumed_from = 0

    # -- public inputs, validated before the machine -------------------------
    def got_record(self, raw):
        try:
            record = M.parse_record(raw)
        except M.MessageError as e:
            return self._got_bad(e)
        if isinstance(record, M.OfferAccept):
            if record.resume_offset is not None and self._prefix_hasher is not None:
                return self._check_resume(record)
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

    def _check_resume(self, accept):
        """Resume where the receiver's prefix is ours, else from 0 (its
        bytes belong to another version of the file)."""
        hasher = self._prefix_hasher(accept.resume_offset)
        if hasher is not None and hasher.copy().digest() == accept.resume_hash:
            return self._got_accept_resuming(accept.resume_offset, hasher)
        return self._got_accept_resuming(0, None)

    def file_sent(self, size, digest):
        self._unacknowledged.append(M.FileAcknowledge(size, digest))
        self._file_sent(size, digest)

    # -- machine --------------------------------------------------------------
    @m.state(initial=True)
    def S0_opening(self): pass  # noqa

    @m.state()
    def S1_offered(self): pass  # noqa

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
    def _got_accept_resuming(self, offset, hasher): pass  # noqa

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
    def all_sent(self): pass  # noqa

    @m.input()
    def source_failed(self, error): pass  # noqa

    @m.output()
    def _send_offer(self):
        self._write(M.encode_record(self._offer))

    @m.output()
    def _stream(self):
        self._streamer = self._start_streaming()

    @m.output()
    def _answer_resume(self, offset):
        # the resume feature's header: the same FileOffer, with the offset
        self._resumed_from = offset
        self._write(M.encode_record(M.FileOffer(self._offer.filename, self._offer.timestamp,
                                                self._offer.bytes, offset)))

    @m.output()
    def _stream_from(self, offset, hasher):
        self._streamer = self._start_streaming(offset, hasher)

    @m.output()
    def _stop_streaming(self):
        self._streamer.stop()

    @m.output()
    def _send_ack(self, size, digest):
        self._write(M.encode_record(M.FileAcknowledge(size, digest)))

    @m.output()
    def _close_subchannel(self):
        self._close()

    @m.output()
    def _succeed(self):
        self._finished(OfferResult(*self._confirmed, self._resumed_from))

    @m.output()
    def _fail_rejected(self, reason):
        self._finished(OfferRejected(reason))

    @m.output()
    def _fail_bad(self, error):
        self._finished(error)

    @m.output()
    def _fail_mismatch(self, expected, got):
        self._finished(AcknowledgeMismatch(
            f"the peer received different bytes: {got.bytes} bytes with hash "
            f"{got.hash.hex()}, where we sent {expected.bytes} bytes with hash "
            f"{expected.hash.hex()}"))

    @m.output()
    def _fail_second_accept(self):
        self._finished(M.MessageError("the peer accepted the same offer twice"))

    @m.output()
    def _fail_lost(self):
        self._finished(OfferLost("the connection for this offer closed before it completed"))

    @m.output()
    def _fail_cancelled(self, reason):
        self._finished(OfferLost(f"offer cancelled: {reason}"))

    @m.output()
    def _fail_source(self, error):
        self._finished(error)

    S0_opening.upon(connected, enter=S1_offered, outputs=[_send_offer])
    S0_opening.upon(lost, enter=S4_done, outputs=[_fail_lost])
    S0_opening.upon(cancel, enter=S4_done, outputs=[_close_subchannel, _fail_cancelled])

    S1_offered.upon(_got_accept, enter=S2_sending, outputs=[_stream])
    S1_offered.upon(_got_accept_resuming, enter=S2_sending, outputs=[_answer_resume, _stream_from])
    S1_offered.upon(_got_reject, enter=S4_done, outputs=[_close_subchannel, _fail_rejected])
    S1_offered.upon(_got_bad, enter=S4_done, outputs=[_close_subchannel, _fail_bad])
    S1_offered.upon(lost, enter=S4_done, outputs=[_fail_lost])
    S1_offered.upon(cancel, enter=S4_done, outputs=[_close_subchannel, _fail_cancelled])

    S2_sending.upon(_file_sent, enter=S2_sending, outputs=[_send_ack])
    S2_sending.upon(all_sent, enter=S3_awaiting_acks, outputs=[])
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
    for _input in (connected, lost, _got_accept, _got_accept_resuming, _got_reject, _got_bad, _got_ack,
                   _got_ack_caught_up, _got_mismatch, _file_sent, all_sent, source_failed):
        S4_done.upon(_input, enter=S4_done, outputs=[])
    S4_done.upon(cancel, enter=S4_done, outputs=[])
    del _input
