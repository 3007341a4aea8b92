"""What the receiving rules raise (docs/security.md "Receiving files and directories")."""
from ..errors import TransferError


class Refused(TransferError):
    """We will not accept this offer (an overwrite, no room, a damaged or
    hostile archive...); the peer is told that it was rejected."""


class BadOffer(Refused):
    """The offer itself is malformed (a missing or unusable name, a bad
    count): refused, and a failure (exit status 1), not a decision of
    ours like an overwrite or a lack of room (docs/cli.md, "Exit status")."""


class BadName(BadOffer):
    """A name from the peer that we will not write, whichever protocol
    carried it (classic offer, zip entry, transfer-v2 offer): one message
    for one rule (``_names.check_name``)."""
