"""How deep JSON from the network may nest, checked before it is decoded.

Python's json module recurses once per level: a peer's (or a server's)
``[[[[...]]]]`` a few thousand levels deep raises RecursionError, which is
no ValueError, so it escaped the "bad input" paths and was blamed on
whoever happened to be on the stack (issue 11). Counting the brackets
outside strings first turns it into an ordinary ValueError, raised where
the bytes are decoded, i.e. blamed on whoever sent them.
"""

import re

# The deepest message of the wormhole protocols nests 4 levels (a version
# message's app_versions, a transit hint list); applications' own dicts
# get room to spare. docs/security.md "Mailbox client".
MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def check_json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ValueError if ``text``'s arrays and objects nest deeper than
    ``limit``. Malformed text is left for the JSON decoder to refuse."""
    # what nearly every message takes: too few brackets to be too deep
    if text.count("[") + text.count("{") <= limit:
        return
    depth = 0
    for m in _BRACKET.finditer(_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > limit:
                raise ValueError(f"JSON nested deeper than {limit} levels")
        else:
            depth -= 1
