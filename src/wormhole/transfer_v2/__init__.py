"""Dilated File Transfer (transfer-v2): offers of files and directories in
both directions over a dilated wormhole. See docs/transfer-v2.md."""
from ._api import CONTROL_SUBPROTOCOL, OFFER_SUBPROTOCOL, TransferSession
from ._incoming import IncomingOffer
from ._messages import MessageError
from ._receiving import (
    HashMismatch,
    OfferAlreadyAnswered,
    OfferRefused,
    Received,
    ReceiveFailed,
    Rejected,
)
from ._resumable import KEPT_SUFFIXES
from ._sending import AcknowledgeMismatch, OfferLost, OfferRejected, OfferResult
from ._source import Outgoing, SourceChanged
from ._source import prepare as prepare_offer
from ._versions import IncompatibleModes, PeerUsesClassic, app_versions, speaks_transfer_v2

__all__ = [
    "CONTROL_SUBPROTOCOL", "OFFER_SUBPROTOCOL", "IncomingOffer", "TransferSession",
    "MessageError", "HashMismatch", "OfferAlreadyAnswered", "OfferRefused", "ReceiveFailed",
    "Received", "Rejected",
    "AcknowledgeMismatch", "OfferLost", "OfferRejected", "OfferResult", "Outgoing",
    "SourceChanged", "prepare_offer", "IncompatibleModes", "PeerUsesClassic", "app_versions",
    "speaks_transfer_v2", "KEPT_SUFFIXES",
]
