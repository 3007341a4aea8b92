"""A whole transfer with any peer, as a library (docs/api.md "Sessions"):
``Transfer`` (send or receive over a wormhole made with
``wormhole_options``), its events and its observer and policy
interfaces; and the pieces the ``wormhole`` command and applications share. ``FirstConnection``
makes a transfer-v2 session with no way to the peer fail in seconds, naming
the leg (``wormhole.errors.NoPath``); ``PeerError`` ends a session at once
when the peer's ``error`` message arrives; ``kept_in``, ``kept_for``,
``discard`` and ``expire`` list and remove what interrupted receives kept
(the next receive of the same offer resumes from it)."""
from .._dilation.manager import OldPeerCannotDilateError
from .._escape import escape_text
from .._inactivity import PeerTimeout, Watchdog, give_up_after, silence
from .._landing import BadOffer, Refused, default_free_space
from .._transit._hints import parse_relay_string
from .._wording import naturalsize, peer_left
from ..errors import NoPath
from ._events import (
    Failed,
    Finished,
    OfferAccepted,
    OfferArrived,
    OfferRefused,
    Progress,
    ProtocolChosen,
    Received,
    Sent,
    TextReceived,
)
from ._interfaces import IReceivePolicy, ITransferObserver
from ._kept import MAX_AGE_DAYS, Kept, discard, expire, kept_for, kept_in
from ._peer_error import PeerError
from ._reach import CHECK_AFTER, LOOKS, PROBE_TIMEOUT, FirstConnection, probe
from ._transfer import PEER_TIMEOUT, AcceptAll, Transfer, failure_event, wormhole_options

__all__ = ["CHECK_AFTER", "LOOKS", "PROBE_TIMEOUT", "FirstConnection", "NoPath", "PeerError",
           "probe", "MAX_AGE_DAYS", "Kept", "discard", "expire", "kept_for", "kept_in",
           "OldPeerCannotDilateError", "Failed", "Finished", "OfferAccepted", "OfferArrived",
           "OfferRefused", "ProtocolChosen", "Progress", "Received", "Sent", "TextReceived",
           "IReceivePolicy", "ITransferObserver", "PEER_TIMEOUT", "AcceptAll", "Transfer",
           "failure_event", "wormhole_options",
           # shared with every renderer of the events (the CLI's too):
           # text from the peer escaped, sizes and departures worded, the
           # bounds on a silent peer, the receiving rules' refusals, relays
           "escape_text", "naturalsize", "peer_left", "PeerTimeout", "Watchdog",
           "give_up_after", "silence", "BadOffer", "Refused", "default_free_space",
           "parse_relay_string"]
