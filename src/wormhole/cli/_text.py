"""What both sides of the file-transfer protocol (spec 004 chapter 9)
share: parsing a peer message, and the words sent when the human rejects
the verification code. (The sender of texts, files and directories is
``_offer.OfferSender``; the recipient ``_receiver.Receiver``.)
"""
from ..util import bytes_to_dict

# what each side says on the wire (the values are the peer's to display)
VERIFICATION_REJECTED = "the sender rejected the verification code; transfer abandoned"


def _parse(body):
    """Decode a peer message, or return None when it is not a JSON object
    (or nests deeper than the JSON decoder's recursion allows: a peer's
    ``[[[[...`` must be refused like any garbage, not crash us)."""
    try:
        return bytes_to_dict(body)
    except (ValueError, RecursionError):
        return None
