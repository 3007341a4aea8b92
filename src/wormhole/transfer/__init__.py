"""Classic file transfer (File-transfer protocol) as a library: send a
text, a file or a directory to any peer that speaks it (the reference 0.24,
wormhole-william, ours), and receive under a policy, over a wormhole the
application created. See docs/transfer.md.

The high-level calls are ``send_text``, ``send_file`` and ``receive``;
the protocol machines (``text_sender``, ``file_sender``, ``Receiver``)
and the offer builder (``prepare``) are there for applications that drive
the messages themselves (``wormhole ssh`` does).
"""
from .. import _lazy

# public name -> the submodule that defines it. Imported on first use
# (PEP 562): a transfer-v2 command needs a few message names from here
# and none of the protocol machines; importing all eleven modules (and
# building their Automat machines) cost each CLI process ~6 ms of CPU
# (docs/performance.md, "Session 8: the fixed part").
_WHERE = {
    "Cancellation": "_cancel", "Cancelled": "_cancel",
    "IOfferSender": "_interfaces", "IReceiver": "_interfaces",
    "DECLINED_WORDS": "_messages", "TRANSFER_REJECTED": "_messages",
    "VERIFICATION_REJECTED": "_messages", "ZIP_MODE": "_messages", "Declined": "_messages",
    "parse_message": "_messages", "peer_gave_up": "_messages", "CANCELLED": "_messages",
    "file_sender": "_offer", "text_sender": "_offer",
    "Outgoing": "_outgoing", "Unsendable": "_outgoing", "describe": "_outgoing",
    "prepare": "_outgoing",
    "DeclinedOffer": "_receive", "Offer": "_receive", "Received": "_receive",
    "ReceivePolicy": "_receive", "receive": "_receive",
    "Receiver": "_receiver",
    "Sent": "_send", "send_file": "_send", "send_text": "_send",
}


__getattr__, __dir__ = _lazy.names(globals(), _WHERE, __name__)


__all__ = [
    "send_text", "send_file", "receive", "ReceivePolicy", "Offer", "Received", "Sent",
    "prepare", "Outgoing", "Unsendable", "describe", "Declined", "DeclinedOffer",
    "DECLINED_WORDS", "TRANSFER_REJECTED", "VERIFICATION_REJECTED", "ZIP_MODE",
    "parse_message", "peer_gave_up", "text_sender", "file_sender", "Receiver",
    "IOfferSender", "IReceiver", "Cancellation", "Cancelled", "CANCELLED",
]
