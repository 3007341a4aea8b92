"""A whole transfer with any peer, as a library (docs/api.md "Sessions"):
``Transfer`` (send or receive over a wormhole made with
``wormhole_options``), its events and its observer and policy
interfaces; and the pieces the ``wormhole`` command and applications
share. ``FirstConnection`` makes a transfer-v2 session with no way to the
peer fail in seconds, naming the leg (``wormhole.errors.NoPath``);
``PeerError`` ends a session at once when the peer's ``error`` message
arrives; ``kept_in``, ``kept_for``, ``discard`` and ``expire`` list and
remove what interrupted receives kept (the next receive of the same offer
resumes from it).

Besides, what every renderer of the events (the CLI's too) shares: text
from the peer escaped, sizes and departures worded, the bounds on a
silent peer, the receiving rules' refusals and targets, relay strings.

The names are imported on first use (PEP 562), as ``wormhole.transfer``'s
are: the command line takes a few light ones (``escape_text``) while it
builds its options, and must not load the client for ``--help``.
"""
from .. import _lazy

# public name -> the module (under wormhole) that defines it
_WHERE = {
    "NoPath": "errors",
    "OldPeerCannotDilateError": "_dilation.manager",
    "escape_text": "_escape",
    "PeerTimeout": "_inactivity", "Watchdog": "_inactivity", "give_up_after": "_inactivity",
    "silence": "_inactivity",
    "BadOffer": "_landing", "Refused": "_landing", "check_not_existing": "_landing",
    "default_free_space": "_landing", "target_path": "_landing",
    "parse_relay_string": "_transit._hints",
    "naturalsize": "_wording", "peer_left": "_wording",
    "Failed": "session._events", "Finished": "session._events",
    "OfferAccepted": "session._events", "OfferArrived": "session._events",
    "OfferRefused": "session._events", "ProtocolChosen": "session._events",
    "Progress": "session._events", "Received": "session._events", "Sent": "session._events",
    "TextReceived": "session._events", "OfferFailed": "session._events",
    "Connected": "session._events", "Totals": "session._events",
    "FileStarted": "session._events",
    "outcome": "session._outcome", "rejected": "session._outcome", "lost": "session._outcome",
    "NOT_V2": "session._share", "NO_DILATION": "session._share", "Share": "session._share",
    "share_options": "session._share",
    "IReceivePolicy": "session._interfaces", "ITransferObserver": "session._interfaces",
    "IStreamPolicy": "session._interfaces",
    "MAX_AGE_DAYS": "session._kept", "Kept": "session._kept", "discard": "session._kept",
    "expire": "session._kept", "kept_for": "session._kept", "kept_in": "session._kept",
    "PeerPath": "session._path", "as_classic": "session._path",
    "PeerError": "session._peer_error", "ReceiveFlow": "session._receive_flow",
    "CHECK_AFTER": "session._reach", "LOOKS": "session._reach",
    "PROBE_TIMEOUT": "session._reach", "FirstConnection": "session._reach",
    "probe": "session._reach",
    "PEER_TIMEOUT": "session._transfer", "AcceptAll": "session._transfer",
    "STREAM_NEEDS_V2": "session._transfer",
    "Transfer": "session._transfer", "failure_event": "session._transfer",
    "RulesRefused": "session._transfer",
    "wormhole_options": "session._transfer",
}


__getattr__, __dir__ = _lazy.names(globals(), _WHERE, "wormhole")


__all__ = sorted(_WHERE)
