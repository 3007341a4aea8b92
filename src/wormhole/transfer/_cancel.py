"""Stopping a classic transfer on purpose while its bytes move, and
telling the peer why (docs/transfer.md "Cancelling").

By then both sides closed the wormhole (File-transfer protocol,
"Transit": the ``file_ack`` was the last mailbox message), so the
spec's ``error`` message (File-transfer protocol, "Sender";
File-transfer protocol, "Recipient") cannot go through the mailbox any
more: the Transit record pipe is all that is left, and what goes over it
must stay a plain failure for a peer that does not know this convention
(the reference 0.24, wormhole-william):

- File-transfer protocol, "Transit" has the sender send file records
  and nothing else; the reference's ``FileSender`` and wormhole-william
  stop at the end of the file and never send an empty record, though
  Transit protocol, "Records" lets a record be any size. So the sender
  says "cancelled" with one **empty record**, followed by the **reason**
  (UTF-8) as one more record when more than its length of file bytes
  were still due, then closes. A receiver that does not know this writes
  nothing for the empty record, the reason's few bytes as file data,
  then sees the close before the announced size: its transfer fails as
  on any close, and the reason can never complete a file (more bytes
  were due than it holds).
- the receiver's only record is the final ack (File-transfer protocol,
  "Transit"). Instead, it sends the spec's error message ``{"error":
  REASON}``, then closes. A sender that reads it as the final ack finds no
  ``"ack": "ok"`` and fails (the reference: "Transfer failed (remote says:
  ...)"; wormhole-william: "Got non ok final ack from receiver"); one that
  is still sending sees the close.

``REASON`` is what the CLI also puts in the mailbox's ``error``
("transfer cancelled (Ctrl-C)"): ``peer_gave_up`` turns it into "the
sender cancelled the transfer (Ctrl-C)" on our side.
"""
from twisted.internet import defer

from .._escape import excerpt
from ..errors import TransferError
from ..util import dict_to_bytes
from ._messages import parse_message, peer_gave_up

# the sender's "cancelled" (see above)
CANCEL_RECORD = b""
# how long a cancel waits for the connection to flush what is buffered
# (the marker is behind the file records already written) and close
FLUSH_TIMEOUT = 2.0
# how long a cancel waits for a Transit connection being made, to tell
# the peer over it
CONNECT_TIMEOUT = 2.0
# how long a receiver that got the empty record waits for the reason (it
# comes in the same write, then the sender closes)
REASON_TIMEOUT = 2.0
# a reason longer than this is cut (peer_gave_up shows 80 characters)
MAX_REASON = 200


class Cancelled(TransferError):
    """We stopped the transfer on purpose (``Cancellation.cancel``)."""


class Cancellation:
    """Handed to ``send_file`` or ``receive`` by an application that may
    stop the transfer on purpose (the CLI does on Ctrl-C and SIGTERM).

    ``cancel(reason)`` while the bytes move tells the peer ``reason``
    over the Transit connection (the convention above), closes it, and
    fails the transfer with ``Cancelled``; it fires once the connection is
    closed, or after FLUSH_TIMEOUT seconds. While the Transit connection
    is being made it waits for it (at most CONNECT_TIMEOUT seconds) and
    does the same. Before that (the mailbox part) it is only remembered:
    the transfer stops without a byte once Transit connects, and telling
    the peer through the mailbox is the application's (the spec's
    ``error`` message; the CLI sends it). Only the first reason counts."""

    def __init__(self):
        self.reason = None
        self._stop = None      # while the bytes move: how to stop them
        self._clock = None     # while Transit connects (see connecting)
        self._waiting = []     # cancel()s waiting for the connection

    def cancel(self, reason):
        """Stop the transfer, telling the peer ``reason`` (see the class);
        a Deferred that fires once stopped. Only the first call counts."""
        if self.reason is not None:
            return defer.succeed(None)
        self.reason = reason
        if self._stop is not None:
            return defer.maybeDeferred(self._stop, reason)
        if self._clock is not None:
            d = defer.Deferred()
            self._waiting.append(d)
            return d.addTimeout(CONNECT_TIMEOUT, self._clock).addErrback(lambda f: None)
        return defer.succeed(None)

    def connecting(self, clock):
        """The Transit connection is being made: a cancel now waits for it
        (on ``clock``) to tell the peer."""
        self._clock = clock

    def moving(self, stop):
        """The bytes start moving: ``stop(reason)`` (a Deferred) stops
        them. Returns a function to call once they stopped moving."""
        self._stop = stop
        if self.reason is not None:
            told = defer.maybeDeferred(stop, self.reason)
            waiting, self._waiting = self._waiting, []
            for d in waiting:
                told.addBoth(lambda r, d=d: (d.called or d.callback(None), r)[1])

        def done():
            self._stop = None
            self.over()
        return done

    def over(self):
        """The transfer ended (or never reached Transit): nothing waits."""
        self._clock = None
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if not d.called:
                d.callback(None)


def reason_record(reason, due):
    """The record carrying ``reason`` after the empty one, or None when
    no more than its length of file bytes were ``due``."""
    record = reason.encode("utf-8", "replace")[:MAX_REASON]
    return record if due > len(record) else None


def sender_cancelled(reason_record=None):
    """The error for a sender's empty record (and its reason, if any)."""
    if reason_record is None:
        return TransferError("the sender cancelled the transfer")
    return peer_gave_up("sender", reason_record.decode("utf-8", "replace"))


def receiver_record(reason):
    """What a receiver that stops sends in place of the final ack."""
    return dict_to_bytes({"error": reason})


def receiver_cancelled(message):
    """The error for the receiver's record decoded as ``message`` (a
    ``parse_message`` result) when it is a cancel, else None."""
    if isinstance(message, dict) and "error" in message:
        return peer_gave_up("receiver", message["error"])
    return None


def receiver_spoke_early(record):
    """The error for a record from the receiver while the file was still
    being sent: its cancel, or anything else it should not have sent."""
    cancelled = receiver_cancelled(parse_message(record))
    if cancelled is not None:
        return cancelled
    return TransferError(f"the receiver sent {excerpt(bytes(record[:200]))} before all "
                         "bytes were sent")
