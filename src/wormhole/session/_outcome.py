"""A session's outcome from its offers' failures (docs/cli.md "Exit
status"): one offer's failure is itself; several are counted, and the
count is declined when every one was. And what an offer's failure is
called, the same for the library's ``Transfer`` and for the CLI: a
rejection by the peer's human or rules is declined, a peer gone
mid-transfer says how far it got."""
from ..errors import TransferError

# how the receiving rules' refusals begin (wormhole._landing): a target
# that exists, no room for the offer
_RULES = ("refusing to overwrite existing ", "not enough free space")


def rejected(reason):
    """The error of an offer the receiver rejected: declined (exit 3) when
    its human or its receiving rules refused it (the target exists, no
    room: the reason says which), else the peer's words."""
    from ..transfer import Declined, peer_gave_up
    if isinstance(reason, str) and reason.startswith(_RULES) and len(reason) < 4200:
        return Declined(f"the receiver declined: {reason}")
    return peer_gave_up("receiver", reason)


def lost(who, error, done, size):
    """The error of an offer whose connection went (``who``: the peer,
    "sender" or "receiver") once ``done`` of its ``size`` bytes moved: it
    says how far it got, as classic's "the receiver closed the connection
    after X of Y were sent" does; any other error is itself."""
    from .._wording import peer_left
    from ..transfer_v2 import OfferLost, ReceiveFailed
    if not isinstance(error, (OfferLost, ReceiveFailed)):
        return error
    return TransferError(peer_left(who, done, size, "went away") + f" ({error})")


def outcome(failures, offers, what):
    """The error of a session in which ``failures`` (exceptions) of
    ``offers`` offers did not complete, or None: the failure itself when
    there was one offer, else a count (``what`` names the offers), declined
    when every failure was."""
    from ..transfer import Declined  # not at import: the CLI's --help stays light
    if not failures:
        return None
    if offers == 1 and len(failures) == 1:
        return failures[0]
    message = f"{len(failures)} of {offers} {what} did not complete"
    if all(isinstance(f, Declined) for f in failures):
        return Declined(message)
    return TransferError(message)
