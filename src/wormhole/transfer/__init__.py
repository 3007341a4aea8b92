"""Classic file transfer (spec 004 chapter 9) as a library: send a text,
a file or a directory to any peer that speaks it (the reference 0.24,
wormhole-william, ours), and receive under a policy, over a wormhole the
application created. See docs/transfer.md.

The high-level calls are ``send_text``, ``send_file`` and ``receive``;
the protocol machines (``text_sender``, ``file_sender``, ``Receiver``)
and the offer builder (``prepare``) are there for applications that drive
the messages themselves (``wormhole ssh`` does).
"""
from ._cancel import Cancellation, Cancelled
from ._interfaces import IOfferSender, IReceiver
from ._messages import (
    DECLINED_WORDS,
    TRANSFER_REJECTED,
    VERIFICATION_REJECTED,
    ZIP_MODE,
    Declined,
    parse_message,
    peer_gave_up,
)
from ._offer import file_sender, text_sender
from ._outgoing import Outgoing, Unsendable, describe, prepare
from ._receive import DeclinedOffer, Offer, Received, ReceivePolicy, receive
from ._receiver import Receiver
from ._send import Sent, send_file, send_text

__all__ = [
    "send_text", "send_file", "receive", "ReceivePolicy", "Offer", "Received", "Sent",
    "prepare", "Outgoing", "Unsendable", "describe", "Declined", "DeclinedOffer",
    "DECLINED_WORDS", "TRANSFER_REJECTED", "VERIFICATION_REJECTED", "ZIP_MODE",
    "parse_message", "peer_gave_up", "text_sender", "file_sender", "Receiver",
    "IOfferSender", "IReceiver", "Cancellation", "Cancelled",
]
