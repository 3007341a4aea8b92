"""Which names from a peer the receiver accepts, and the temporary names
it writes under (docs/security.md, "Names").

A name (the offered file or folder name, each component of a zip entry)
is checked before anything is streamed: a string, not empty, ``.`` or
``..``, no ``/``, no NUL, no control character (C0, DEL, C1) and no bidi
embedding/override/isolate (they disguise a name on screen: "photo\\u202e
gpj.exe"), valid UTF-8 (no lone surrogate), at most ``NAME_MAX`` bytes
encoded. Other characters are the sender's business; they are escaped
wherever a name is shown.

A temporary name (``temporary_prefix``) keeps as much of the final name
as fits, so any legal final name (up to 255 bytes) can be received.
"""
import unicodedata

# POSIX NAME_MAX on every file system we write to (ext4, xfs, btrfs, tmpfs)
NAME_MAX = 255
PARTIAL_PREFIX = ".wormhole-partial-"
# what tempfile adds to our prefix: 8 random characters
_TEMPFILE_RANDOM = 8
# the bidi controls that reorder what follows them on screen
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class BadName(ValueError):
    """A name we will not write."""


def check_component(name):
    """Raise BadName unless ``name`` is one usable path component."""
    if not isinstance(name, str):
        raise BadName("the name is not a string")
    if name in ("", ".", ".."):
        raise BadName(f"'{name}' is not a usable name")
    if "/" in name or "\x00" in name:
        raise BadName("the name holds a '/' or a NUL")
    for c in name:
        if c in _BIDI or unicodedata.category(c) == "Cc":
            raise BadName(f"the name holds the control character {c!r}")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadName("the name is not valid UTF-8") from None
    if size > NAME_MAX:
        raise BadName(f"the name is {size} bytes long, more than {NAME_MAX}")


def _utf8_prefix(name, nbytes):
    """The longest prefix of ``name`` whose UTF-8 encoding fits ``nbytes``."""
    return name.encode("utf-8")[:nbytes].decode("utf-8", "ignore")


def temporary_prefix(name):
    """The prefix for ``tempfile.mkstemp``/``mkdtemp`` beside a target
    called ``name``: hidden, recognisable, and short enough that the
    random part still fits in NAME_MAX (a 255-byte name gets a truncated
    copy in its temporary name)."""
    room = NAME_MAX - len(PARTIAL_PREFIX) - 1 - _TEMPFILE_RANDOM
    return PARTIAL_PREFIX + _utf8_prefix(name, room) + "."
