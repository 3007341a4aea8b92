"""What a user of a transfer sees, as typed values (docs/api.md
"Sessions"): every one goes to the application's ``ITransferObserver``,
in the order it happened. A renderer (the terminal, JSON lines) shows
them; none carries a terminal's wording. Text that came from the peer
is given as it came: escape it before showing it."""
import attrs


@attrs.frozen
class ProtocolChosen:
    """Which protocol the transfer uses: "transfer-v2" or "classic" (the
    peer announced no transfer-v2, or cannot dilate)."""
    protocol: str
    why: str = ""


@attrs.frozen
class Connected:
    """A transfer-v2 connection to the peer is up (again, after Dilation
    lost one: ``again``); ``via`` says how, in classic Transit's words:
    "->tcp:HOST:PORT" (we dialled), "<-tcp:HOST:PORT" (the peer did),
    "->relay:tcp:HOST:PORT" (through a relay). The host names came from
    the peer's hints."""
    via: str
    again: bool = False


@attrs.frozen
class Totals:
    """What the peer says it is about to offer: ``offers`` offers of
    ``size`` bytes in all (its "session-totals"), before its first."""
    offers: int
    size: int


@attrs.frozen
class OfferArrived:
    """The peer offers a file or directory; ``target``: where it would go
    (absolute); ``kept``: bytes an interrupted receive kept for it, which
    an accept resumes from (0: none). Comes before the policy is asked."""
    kind: str
    name: str
    size: int
    target: str
    kept: int = 0


@attrs.frozen
class OfferRefused:
    """An offer refused by the receiving rules (the target exists, no
    room, an unusable name) before the policy was asked, or declined by
    the policy, or refused by the protocol before it was known (over the
    limits, malformed: ``name`` is ""); ``by``: "rules", "policy" or
    "protocol"; the peer hears ``reason``."""
    name: str
    reason: str
    by: str


@attrs.frozen
class OfferAccepted:
    """An accepted offer, once our answer is out: ``resumed_from`` bytes
    of it were kept from an earlier session and are not sent again."""
    name: str
    target: str
    resumed_from: int = 0


@attrs.frozen
class Progress:
    """Bytes of one offer done so far (``total``: the offer's size)."""
    name: str
    done: int
    total: int


@attrs.frozen
class FileStarted:
    """A file of a directory offer (``offer``: the offer's name) begins:
    ``path`` inside the directory ("/"-joined, the peer's text on the
    receiving side), ``size`` bytes, from ``offset`` (bytes kept by an
    earlier session, or the receiver's resume)."""
    offer: str
    path: str
    size: int
    offset: int = 0


@attrs.frozen
class Received:
    """A file or directory arrived whole at ``path``."""
    name: str
    path: str
    size: int


@attrs.frozen
class TextReceived:
    text: str


@attrs.frozen
class Sent:
    """An offer of ours the peer confirmed (``resumed_from`` bytes it
    already held were not sent)."""
    name: str
    size: int
    resumed_from: int = 0


@attrs.frozen
class OfferFailed:
    """One offer of ours did not complete and the session goes on
    (``Share``): ``kind`` "declined" (the peer said no) or "error"."""
    name: str
    kind: str
    message: str


@attrs.frozen
class Failed:
    """The transfer failed. ``kind``: "no-path" (``leg`` is "relay",
    "direct" or "peer"), "peer-error" (the peer stopped on purpose;
    ``message`` holds its words), "declined" (an offer was declined: by
    the peer, or by our policy, and nothing arrived), "refused" (the
    receiving rules refused the peer's offer), "wrong-code" or "error"."""
    kind: str
    message: str
    leg: str = None


@attrs.frozen
class Finished:
    """The transfer is over and succeeded."""
