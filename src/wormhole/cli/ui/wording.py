"""What the transfer commands say about the protocol they use, about
what the sender is about to send (said once, before the code, as the
reference 0.24 does: docs/cli.md "Files and directories"), about an offer
and about what arrived (which status failures add up to: ``_failures``)."""
from ...session import escape_text, naturalsize
from .screen import say

# the peer's version message lists no transfer-v2: an older client, or
# one of ours with --classic (so not "does not speak": it may well)
CLASSIC_USED = "The peer announces no transfer-v2: using the classic protocol."
V2_USED = "Using transfer-v2 (Dilated File Transfer)."
CANNOT_DILATE = ("The peer announces transfer-v2 but cannot dilate (no Dilation version we "
                 "share): using the classic protocol.")
NOT_A_FILE = ("transfer-v2 sends regular files and directories: using the classic "
              "protocol for '{}'.")
TEXT_SENT = "text message sent"


def count(n, noun):
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 file", "3 files",
    "0 directories"."""
    if n == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {plural}"


def describe(offer, is_directory):
    """An offer in one phrase: "file 'a.txt' (12 Bytes)", "directory 'd'
    (3 files, 4.0 kB)"; the names may be the peer's: escaped."""
    if is_directory:
        return (f"directory '{escape_text(offer.base)}' ({count(len(offer.files), 'file')}, "
                f"{naturalsize(offer.size)})")
    return f"file '{escape_text(offer.filename)}' ({naturalsize(offer.bytes)})"


def sending_text(text):
    """The sender's announcement of a text (the reference's words; N
    counts characters, as the reference's does)."""
    return f"Sending text message ({naturalsize(len(text))})"


def sending_paths(outgoings):
    """The sender's announcement, before the code, of the transfer-v2
    offers it prepared (``Outgoing``s): one file or directory in the
    reference's words ("Sending 31.5 MB file named 'B.bin'"; a directory
    has no zipfile here, so its files and their size instead of the
    reference's compressed size), several summed up in one line."""
    if len(outgoings) == 1:
        [o] = outgoings
        if not o.is_directory:
            return (f"Sending {naturalsize(o.size)} file named "
                    f"'{escape_text(o.offer.filename)}'")
        return (f"Sending directory ({count(len(o.files), 'file')}, {naturalsize(o.size)}) "
                f"named '{escape_text(o.offer.base)}'")
    directories = sum(1 for o in outgoings if o.is_directory)
    kinds = [count(n, noun) for n, noun in ((len(outgoings) - directories, "file"),
                                            (directories, "directory")) if n]
    return (f"Sending {len(outgoings)} paths: {' and '.join(kinds)} "
            f"({naturalsize(sum(o.size for o in outgoings))})")


def written_to(is_directory, path):
    """The receiver's line once an offer is in place (transfer-v2): a
    directory says so, whatever number of files it held."""
    what = "directory" if is_directory else "file"
    return f"Received {what} written to: {escape_text(path)}"


def peer_says(cfg):
    """The peer's free-form texts (control messages) on stderr, escaped."""
    return lambda text: say(cfg, f"peer says: {escape_text(text)}")


def received_text(text):
    """A received text as ``wormhole receive`` prints it on stdout: the
    shared ``escape_text`` (so a peer cannot drive the receiver's
    terminal), plus the one thing ``repr()`` also does and the reference's
    stdout therefore shows: ``'`` becomes ``\\'`` when the text holds both
    kinds of quote. The result equals ``repr(text)`` without its quotes."""
    shown = escape_text(text)
    if "'" in text and '"' in text:
        shown = shown.replace("'", "\\'")
    return shown
