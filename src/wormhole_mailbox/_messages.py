# -*- test-case-name: tests.server.test_messages -*-
"""Decoding and checking client->server messages before any machine sees them.

Mailbox server protocol, "WebSocket Transport": each message is one JSON object, UTF-8, with
a `type` key; and its "Connection-Specific (Client-to-Server) Messages":
"if any client->server command is invalid (e.g. it lacks a
necessary key ...), an `error` response will be sent ... with the error string
in the `error` key, and a full copy of the original message dictionary in
`orig`". Where the reference already names a condition we keep its words
(clients and operators know them); the rest say what was wrong and what to do.
"""

import json
import re

# the one JSON nesting guard, shared with the client (docs/security.md,
# "Mailbox server" and "Mailbox client"): the parser
# recurses once per level and must never see a message that could exhaust
# the stack, nor would echoing one in `orig` be safe
from wormhole._jsonlimit import json_depth_exceeds

_DIGITS = re.compile(r"\A[0-9]+\Z")
_HEX = re.compile(r"\A(?:[0-9a-fA-F]{2})*\Z")

# Mailbox server protocol, "All Message Types": what a client may send
CLIENT_TYPES = frozenset(["submit-permissions", "bind", "list", "allocate",
                          "claim", "release", "open", "add", "close", "ping"])


class BadMessage(Exception):
    """``error`` is the text for the client; ``orig`` what to echo."""

    def __init__(self, error, orig, limit=None):
        super().__init__(error)
        self.error = error
        self.orig = orig
        self.limit = limit  # the option that refused it, if a limit did


def decode(payload, max_size, max_depth=32):
    """bytes -> dict, or raise BadMessage (with a description as `orig`
    when the payload did not even parse)."""
    if len(payload) > max_size:
        raise BadMessage(
            f"message too large: {len(payload)} bytes, this server accepts "
            f"at most {max_size} bytes per message",
            f"<{len(payload)} bytes, not parsed>", "max_message_size")
    if json_depth_exceeds(payload, max_depth):
        raise BadMessage(
            f"message nests arrays/objects more than {max_depth} levels "
            "deep; this server refuses it unparsed (send a flat JSON object)",
            f"<{len(payload)} bytes, nested too deeply, not parsed>",
            "max_json_depth")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadMessage(
            f"message is not valid UTF-8 ({e.reason} at byte {e.start}); "
            "send JSON encoded as UTF-8",
            f"<{len(payload)} bytes of invalid UTF-8>") from e
    try:
        msg = json.loads(text)
    except ValueError as e:
        raise BadMessage(f"message is not JSON ({e}); send one JSON object "
                         "per WebSocket message",
                         f"<{len(payload)} bytes that are not JSON>") from e
    if not isinstance(msg, dict):
        raise BadMessage("message must be a JSON object with a 'type' key, "
                         f"got a JSON {type(msg).__name__}", msg)
    return msg


def check_type(msg):
    """The `type` (and `id`) of a decoded object, or raise BadMessage."""
    if "type" not in msg:
        raise BadMessage("missing 'type': every message needs a 'type' key "
                         "(bind, claim, open, add, ...)", msg)
    mtype = msg["type"]
    if not isinstance(mtype, str):
        raise BadMessage("'type' must be a string", msg)
    if mtype not in CLIENT_TYPES:
        # the reference's words
        raise BadMessage("unknown type", msg)
    msg_id = msg.get("id")
    if msg_id is not None and not isinstance(msg_id, (str, int, float)):
        raise BadMessage("'id' must be a string (or a number)", msg)
    return mtype


def _string(msg, key, required, limit, what=None):
    """The value of ``key`` as a str (or None if absent and optional)."""
    value = msg.get(key)
    mtype = msg["type"]
    if value is None:
        if required:
            # the reference's words for a missing key
            if mtype in ("bind", "claim", "open", "ping",
                         "submit-permissions"):
                raise BadMessage(f"{mtype} requires '{key}'", msg)
            raise BadMessage(f"missing '{key}'", msg)
        return None
    if not isinstance(value, str):
        raise BadMessage(f"{mtype} '{key}' must be a string, got "
                         f"{type(value).__name__}", msg)
    if not value and required:
        raise BadMessage(f"{mtype} '{key}' must not be empty", msg)
    if len(value) > limit:
        raise BadMessage(f"{mtype} '{key}' is too long ({len(value)} "
                         f"characters, at most {limit})", msg)
    return value


def _nameplate(msg, required, limits):
    name = _string(msg, "nameplate", required, limits.max_token_length)
    if name is None:
        return None
    if not _DIGITS.match(name):
        raise BadMessage(f"nameplate must be a string of digits (like '4'), "
                         f"got {name!r}", msg)
    if len(name) > limits.max_nameplate_length:
        raise BadMessage(f"nameplate too long ({len(name)} digits, at most "
                         f"{limits.max_nameplate_length})", msg)
    return name


def fields(msg, limits):
    """Check the type-specific keys; return them as a tuple for the
    machine input (the order is the input's signature)."""
    mtype = msg["type"]
    tok = limits.max_token_length
    if mtype == "bind":
        return (_string(msg, "appid", True, tok),
                _string(msg, "side", True, tok))
    if mtype == "claim":
        return (_nameplate(msg, True, limits),)
    if mtype == "release":
        return (_nameplate(msg, False, limits),)
    if mtype == "open":
        return (_string(msg, "mailbox", True, tok),)
    if mtype == "add":
        phase = _string(msg, "phase", True, tok)
        body = msg.get("body")
        if body is None:
            raise BadMessage("missing 'body'", msg)
        if not isinstance(body, str) or not _HEX.match(body):
            raise BadMessage("add 'body' must be a hex string (an even "
                             "number of 0-9a-f digits)", msg)
        return (phase, body)
    if mtype == "close":
        return (_string(msg, "mailbox", False, tok),
                _string(msg, "mood", False, 64))
    if mtype == "ping":
        if "ping" not in msg:
            raise BadMessage("ping requires 'ping'", msg)
        ping = msg["ping"]
        if isinstance(ping, (dict, list)):
            raise BadMessage("ping 'ping' must be a number", msg)
        return (ping,)
    if mtype == "submit-permissions":
        method = _string(msg, "method", True, 64)
        stamp = _string(msg, "stamp", False, tok)
        return (method, stamp)
    return ()


# json.dumps with any option builds a new encoder per call; one will do
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def encode(msg):
    """dict -> bytes; the caller has set every key."""
    return _ENCODER.encode(msg).encode("utf-8")


def safe_orig(orig):
    """``orig`` if it can be echoed back, else a short description (a
    deeply nested message can parse but not re-encode)."""
    try:
        json.dumps(orig)
    except (RecursionError, ValueError, TypeError):
        return "<message too deeply nested to echo>"
    return orig
