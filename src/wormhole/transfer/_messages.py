"""What both sides of the classic protocol (File-transfer protocol)
share: parsing a peer message, the hints of a ``transit`` message, the
words sent when a human says no, and the error a peer's ``error`` message
becomes. (The sender of texts, files and directories is
``_offer.OfferSender``; the recipient ``_receiver.Receiver``.)
"""
from .._escape import excerpt
from ..errors import TransferError
from ..util import bytes_to_dict

# File-transfer protocol, "Sender": a directory offer's only compression mode
ZIP_MODE = "zipfile/deflated"
# what each side says on the wire (the values are the peer's to display)
VERIFICATION_REJECTED = "the sender rejected the verification code; transfer abandoned"
# the reference's words when the receiving human (or its rules) says no
TRANSFER_REJECTED = "transfer rejected"
# the reference 0.24 sender's words when its human rejects the verifier
REFERENCE_VERIFICATION_REJECTED = "sender rejected verification check, abandoned transfer"
# an ``error`` with one of these means a human declined: exit status 3
# how our CLI's ``error`` begins when its human stopped it (cli/_interrupt.py)
CANCELLED = "transfer cancelled"
DECLINED_WORDS = (VERIFICATION_REJECTED, TRANSFER_REJECTED, REFERENCE_VERIFICATION_REJECTED)


class Declined(TransferError):
    """A human declined the transfer (ours or the peer's): the command
    exits with status 3, not 1 (docs/cli.md, "Exit status")."""


def peer_gave_up(who, error):
    """The error a peer's ``{"error": ERROR}`` ends the transfer with;
    ``who`` is "sender" or "receiver"."""
    if error in DECLINED_WORDS:
        return Declined(f"the {who} declined: {error}")
    # the peer's error may be any JSON value: only a string can be ours
    if isinstance(error, str) and error.startswith(CANCELLED) and len(error) < 80:
        # a side of ours stopped on purpose (Ctrl-C, SIGTERM; docs/cli.md)
        return TransferError(f"the {who} cancelled the transfer{excerpt(error[len(CANCELLED):])}")
    return TransferError(f"the {who} gave up: {excerpt(error)}")


def parse_message(body):
    """Decode a peer message, or return None when it is not a JSON object
    (or nests deeper than the JSON decoder's recursion allows: a peer's
    ``[[[[...`` must be refused like any garbage, not crash us)."""
    try:
        return bytes_to_dict(body)
    except (ValueError, RecursionError):
        return None


def hints_of(transit):
    """The ``hints-v1`` list of a peer's ``transit`` value
    (File-transfer protocol, "Transit"); anything malformed counts as no
    hints."""
    hints = transit.get("hints-v1") if isinstance(transit, dict) else None
    return hints if isinstance(hints, list) else []
