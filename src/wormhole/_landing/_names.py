"""Which names from a peer the receiver accepts, and the hidden names it
writes under (docs/security.md "Names").

One rule for every name a peer proposes, whatever carried it (a classic
offer's ``filename``/``dirname``, each component of a zip entry, a
transfer-v2 offer's name and every segment of its paths): a string, not
empty, ``.`` or ``..``; no ``/``, no ``\\``, no NUL (one component, which
addresses no other place); no control character (C0, DEL, C1) and no bidi
embedding/override/isolate (they drive a terminal, or disguise a name on
screen: "photo\\u202egpj.exe"); valid UTF-8 (no lone surrogate); at most
``NAME_MAX`` bytes encoded. A path of such names is at most
``MAX_PATH_BYTES`` long. Other characters are the sender's business; they
are escaped wherever a name is shown.

A refusal is ``BadName`` with one message, so both protocols say the same
thing for the same name.

The hidden names keep as much of the final name as fits, so any legal final
name (up to 255 bytes) can be received: ``temporary_prefix`` for the random
names of ``tempfile``, ``kept_name`` for the fixed names of what a resumable
transfer keeps between sessions.
"""
import hashlib
import re

from ._errors import BadName

# POSIX NAME_MAX on every file system we write to (ext4, xfs, btrfs, tmpfs)
NAME_MAX = 255
# a whole relative path (PATH_MAX): deeper paths fail only half-way through
MAX_PATH_BYTES = 4096
PARTIAL_PREFIX = ".wormhole-partial-"
# what tempfile adds to our prefix: 8 random characters
_TEMPFILE_RANDOM = 8
# unicodedata category "Cc" (C0, DEL, C1) and the bidi controls that
# reorder what follows them on screen; a character class, because a
# directory offer may hold 200,000 names (one pass in C, not a Python loop)
_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SHOWN = 300  # characters of a refused name kept in the message


def _why_unusable(name):
    """Why ``name`` is not one usable component, or None."""
    if not isinstance(name, str):
        return "the name is not a string"
    if name in ("", ".", ".."):
        return f"'{name}' is not a usable name"
    if "/" in name or "\\" in name or "\x00" in name:
        return "the name holds a '/', a '\\' or a NUL"
    bad = _FORBIDDEN.search(name)
    if bad:
        return f"the name holds the control character {bad.group()!r}"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "the name is not valid UTF-8"
    if size > NAME_MAX:
        return f"the name is {size} bytes long, more than {NAME_MAX}"
    return None


def _refusal(shown, why):
    if isinstance(shown, str):
        shown = shown[:_SHOWN]
    return BadName(f"the sender offered an unusable name '{shown}': {why}")


def check_name(name, shown=None):
    """``name`` if it is one usable component, else BadName naming
    ``shown`` (the whole name as the peer sent it; default ``name``)."""
    why = _why_unusable(name)
    if why is not None:
        raise _refusal(name if shown is None else shown, why)
    return name


def check_path(segments, shown=None):
    """``segments`` (a relative path, one name each) if every one is
    usable and the path fits ``MAX_PATH_BYTES``, else BadName naming
    ``shown`` (default: the segments joined with '/')."""
    if shown is None:
        shown = "/".join(s if isinstance(s, str) else repr(s) for s in segments)
    size = -1
    for segment in segments:
        check_name(segment, shown)
        size += 1 + len(segment.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise _refusal(shown, f"the path is longer than {MAX_PATH_BYTES} bytes")
    return segments


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


def kept_name(base, suffix):
    """The fixed hidden name beside a target called ``base`` where an
    interrupted transfer's bytes or state are kept (``suffix`` says
    which). A name too long for that (a 255-byte file name) keeps a
    prefix and gains a digest of the whole name, so it fits NAME_MAX and
    stays the same for the same offer in the next session."""
    name = PARTIAL_PREFIX + base + suffix
    if len(name.encode("utf-8")) <= NAME_MAX:
        return name
    digest = "~" + hashlib.blake2b(base.encode("utf-8"), digest_size=8).hexdigest()
    room = NAME_MAX - len(PARTIAL_PREFIX.encode("utf-8")) - len(digest) - len(suffix)
    return PARTIAL_PREFIX + _utf8_prefix(base, room) + digest + suffix
