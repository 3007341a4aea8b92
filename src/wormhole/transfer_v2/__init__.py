"""Dilated File Transfer (transfer-v2): offers of files and directories in
both directions over a dilated wormhole. See docs/transfer-v2.md."""
from ._api import (
    CONTROL_SUBPROTOCOL,
    OFFER_SUBPROTOCOL,
    STREAM_REFUSED,
    StreamRefused,
    TransferSession,
)
from ._incoming import IncomingOffer
from ._messages import MessageError
from ._receiving import (
    HashMismatch,
    OfferAlreadyAnswered,
    OfferRefused,
    Received,
    ReceiveFailed,
    Rejected,
    StreamAborted,
)
from ._resumable import KEPT_SUFFIXES
from ._sending import AcknowledgeMismatch, OfferLost, OfferRejected, OfferResult
from ._source import Outgoing, SourceChanged
from ._source import prepare as prepare_offer
from ._stream_sink import STOPPED_READING
from ._stream_source import StreamInputFailed
from ._versions import IncompatibleModes, PeerUsesClassic, app_versions, speaks_transfer_v2

__all__ = [
    "CONTROL_SUBPROTOCOL", "OFFER_SUBPROTOCOL", "IncomingOffer", "TransferSession",
    "MessageError", "HashMismatch", "OfferAlreadyAnswered", "OfferRefused", "ReceiveFailed",
    "Received", "Rejected",
    "AcknowledgeMismatch", "OfferLost", "OfferRejected", "OfferResult", "Outgoing",
    "SourceChanged", "prepare_offer", "IncompatibleModes", "PeerUsesClassic", "app_versions",
    "speaks_transfer_v2", "KEPT_SUFFIXES",
    "STREAM_REFUSED", "StreamRefused", "StreamAborted", "STOPPED_READING",
    "StreamInputFailed",
]
