"""What the transfer commands say about the protocol they use and about
an offer (which status failures add up to: ``_failures``)."""
from ._display import escape_text, naturalsize
from ._progress import say

CLASSIC_USED = "The peer does not speak transfer-v2: using the classic protocol."
V2_USED = "Using transfer-v2 (Dilated File Transfer)."
CANNOT_DILATE = ("The peer announces transfer-v2 but cannot dilate (no Dilation version we "
                 "share): using the classic protocol.")
NOT_A_FILE = ("transfer-v2 sends regular files and directories: using the classic "
              "protocol for '{}'.")
TEXT_SENT = "text message sent"


def describe(offer, is_directory):
    """An offer in one phrase: "file 'a.txt' (12 Bytes)", "directory 'd'
    (3 files, 4.0 kB)"; the names may be the peer's: escaped."""
    if is_directory:
        return (f"directory '{escape_text(offer.base)}' ({len(offer.files)} files, "
                f"{naturalsize(offer.size)})")
    return f"file '{escape_text(offer.filename)}' ({naturalsize(offer.bytes)})"


def peer_says(cfg):
    """The peer's free-form texts (control messages) on stderr, escaped."""
    return lambda text: say(cfg, f"peer says: {escape_text(text)}")
