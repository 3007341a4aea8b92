"""What the transfer commands say about the protocol they use and how a
session ended (docs/cli.md "Exit status"): one place for the words, and
for which status a session's failures add up to."""
from ..errors import TransferError
from ..transfer import Declined
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


def outcome(failures, offers, what):
    """The error of a session in which ``failures`` (exceptions) of
    ``offers`` offers did not complete: the failure itself when there was
    one offer, else a count; declined (exit 3) when every failure was."""
    if not failures:
        return None
    if offers == 1 and len(failures) == 1:
        return failures[0]
    message = f"{len(failures)} of {offers} {what} did not complete"
    if all(isinstance(f, Declined) for f in failures):
        return Declined(message)
    return TransferError(message)


def peer_says(cfg):
    """The peer's free-form texts (control messages) on stderr, escaped."""
    return lambda text: say(cfg, f"peer says: {escape_text(text)}")
