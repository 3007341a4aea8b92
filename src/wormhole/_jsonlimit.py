"""How deep JSON from the network may nest, checked before it is decoded:
the one guard for everything we decode, in the client and in the Mailbox
server.

Python's json module recurses once per level: a peer's (or a server's, or
a client's) ``[[[[...]]]]`` a few thousand levels deep raises
RecursionError, which is no ValueError, so it escaped the "bad input" paths
and was blamed on whoever happened to be on the stack (docs/security.md,
"Mailbox client"). Counting
the brackets outside strings first turns it into an ordinary refusal, made
where the bytes are decoded, i.e. blamed on whoever sent them.
"""

import re

# The deepest message of the wormhole protocols nests 4 levels (a version
# message's app_versions, a transit hint list); applications' own dicts
# get room to spare. docs/security.md "Mailbox client". (The Mailbox
# server has its own limit, --max-json-depth, docs/server.md.)
MAX_JSON_DEPTH = 64

# a JSON string (with its escapes), then every byte that is not a bracket
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


def json_depth_exceeds(text, limit=MAX_JSON_DEPTH):
    """Whether the JSON ``text`` (str, or UTF-8 bytes) nests arrays and
    objects deeper than ``limit``, found without parsing. Malformed text is
    left for the JSON decoder to refuse."""
    # nearly every message opens fewer brackets than the limit, inside
    # strings or not: no need to look closer (the regex is the costly part)
    if isinstance(text, str):
        if text.count("[") + text.count("{") <= limit:
            return False
        # a quote, a backslash or a bracket is one byte in UTF-8, and never
        # part of another character's encoding: the bytes nest as the text
        text = text.encode("utf-8", "surrogatepass")
    elif text.count(b"[") + text.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return False
    depth = 0
    for b in brackets:
        if b in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def check_json_depth(text, limit=MAX_JSON_DEPTH):
    """Raise ValueError if ``text``'s arrays and objects nest deeper than
    ``limit``."""
    if json_depth_exceeds(text, limit):
        raise ValueError(f"JSON nested deeper than {limit} levels")
