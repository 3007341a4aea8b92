"""Version negotiation of transfer-v2
(Dilated File Transfer, "Version Negotiation").

Our ``app_versions`` carry ``{"transfer-v2": {"mode": M, "features": {}}}``;
the peer's decide between transfer-v2 and the classic protocol (no
``transfer-vN`` key at all), and whether the two modes can work together.
"""
import re

import attr

from ..errors import TransferError

SEND, RECEIVE, CONNECT = "send", "receive", "connect"
MODES = (SEND, RECEIVE, CONNECT)
OUR_VERSIONS = (2,)
# features we implement and accept
# (Dilated File Transfer, "Version Negotiation": "Peers MUST _accept_
# messages for any features they declare"): "resume"
# (docs/transfer-v2.md "Resume"),
# "empty-folders" (docs/transfer-v2.md "Empty folders"),
# "session-totals" (docs/transfer-v2.md "Session totals"),
# "framed-records" (docs/transfer-v2.md "Record framing") and "file-modes"
# (docs/transfer-v2.md "File modes") and "stream" (docs/transfer-v2.md
# "Streams")
RESUME = "resume"
EMPTY_FOLDERS = "empty-folders"
SESSION_TOTALS = "session-totals"
FRAMED_RECORDS = "framed-records"
FILE_MODES = "file-modes"
STREAM = "stream"
OUR_FEATURES = {RESUME: {}, EMPTY_FOLDERS: {}, SESSION_TOTALS: {}, FRAMED_RECORDS: {},
                FILE_MODES: {}, STREAM: {}}
_VERSION_KEY = re.compile(r"\Atransfer-v([1-9][0-9]*)\Z")


class IncompatibleModes(TransferError):
    """Both peers only receive, or only send: nothing can happen."""


class PeerUsesClassic(TransferError):
    """The peer announced no transfer-v2: use the classic protocol."""


def app_versions(mode, features=None):
    """Our ``app_versions`` entry for ``wormhole.create(versions=...)``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    return {"transfer-v2": {"mode": mode,
                            "features": dict(OUR_FEATURES if features is None else features)}}


def _their_versions(app_versions):
    """{version number: that version's dict} from the peer's app_versions."""
    found = {}
    if not isinstance(app_versions, dict):
        return found
    for key, value in app_versions.items():
        match = _VERSION_KEY.match(key) if isinstance(key, str) else None
        if match and isinstance(value, dict):
            found[int(match.group(1))] = value
    return found


def speaks_transfer_v2(app_versions):
    """Whether the peer's ``app_versions`` announce a transfer-vN we speak
    (what ``negotiate`` needs before it looks at modes)."""
    return bool(_their_versions(app_versions).keys() & set(OUR_VERSIONS))


@attr.s(frozen=True)
class Negotiated:
    """What the two peers agreed on."""
    version = attr.ib()
    our_mode = attr.ib()
    their_mode = attr.ib()
    # features both declared (we send only what the peer declared)
    features = attr.ib()

    # each feature both declared, as the session and its offers ask it
    @property
    def resume(self):
        return RESUME in self.features

    @property
    def empty_folders(self):
        return EMPTY_FOLDERS in self.features

    @property
    def session_totals(self):
        return SESSION_TOTALS in self.features

    @property
    def framed_records(self):
        return FRAMED_RECORDS in self.features

    @property
    def file_modes(self):
        return FILE_MODES in self.features

    @property
    def stream(self):
        return STREAM in self.features

    @property
    def we_may_offer(self):
        # "Making an Offer": receive never offers; connect offers unless
        # the peer only sends
        return self.our_mode == SEND or (self.our_mode == CONNECT and self.their_mode != SEND)

    @property
    def they_may_offer(self):
        return self.their_mode == SEND or (self.their_mode == CONNECT and self.our_mode != SEND)


def negotiate(our_mode, their_app_versions, our_features=None):
    """Pick the highest common version and check the modes.

    Raises PeerUsesClassic when the peer has no transfer-vN we share, and
    IncompatibleModes for two ``receive`` or two ``send`` peers
    (Dilated File Transfer, "Version Negotiation": they SHOULD end the
    session)."""
    theirs = _their_versions(their_app_versions)
    common = sorted(set(theirs) & set(OUR_VERSIONS))
    if not common:
        raise PeerUsesClassic("the peer does not speak transfer-v2")
    version = common[-1]
    info = theirs[version]
    their_mode = info.get("mode")
    if their_mode not in MODES:
        raise TransferError(f"the peer announced an unknown transfer-v{version} "
                            f"mode {their_mode!r}")
    if our_mode == their_mode and our_mode != CONNECT:
        raise IncompatibleModes(f"both peers are in {our_mode!r} mode: "
                                "nothing can be transferred")
    # the spec's text says "an empty list" in places and shows a dict in
    # the version message: take the keys of either (docs/transfer-v2.md)
    their_features = info.get("features") or {}
    if not isinstance(their_features, (dict, list)):
        their_features = {}
    mine = OUR_FEATURES if our_features is None else our_features
    shared = frozenset(f for f in their_features if isinstance(f, str) and f in mine)
    return Negotiated(version, our_mode, their_mode, shared)
