"""Small byte/text/JSON codecs shared by every layer.

The wire carries JSON objects encoded as UTF-8 (Client-to-client protocol:
payloads are "UTF-8-encoded JSON-encoded" dictionaries) and binary bodies
as hex strings (Mailbox server protocol, "Mailboxes": the `add`
command's `body` key is "a hex-encoded string"). These helpers are the one
place where those conversions happen, so every layer agrees on the bytes.
"""

import binascii
import json
import os
import shutil

from ._jsonlimit import check_json_depth

__all__ = [
    "HKDF",
    "estimate_free_space",
    "to_unicode",
    "bytes_to_dict",
    "bytes_to_hexstr",
    "dict_to_bytes",
    "hexstr_to_bytes",
    "to_bytes",
]


def to_bytes(u: str) -> bytes:
    """Encode text (codes, appids, sides, phases) as UTF-8.

    Only ``str`` is accepted: silently passing bytes through would hide a
    caller that mixed up the two, which matters when the result is hashed.
    """
    if not isinstance(u, str):
        raise TypeError(f"to_bytes() wants str, got {type(u).__name__}")
    return u.encode("utf-8")


def bytes_to_hexstr(b: bytes) -> str:
    """Lower-case hex, the form every hex field on the wire uses."""
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise TypeError(f"bytes_to_hexstr() wants bytes, got {type(b).__name__}")
    return binascii.hexlify(b).decode("ascii")


def hexstr_to_bytes(hexstr: str) -> bytes:
    """Decode a hex string; raises ValueError on anything that is not hex.

    ``binascii.unhexlify`` (unlike ``bytes.fromhex``) rejects embedded
    whitespace, so a body that is not exactly hex is refused.
    """
    if not isinstance(hexstr, str):
        raise TypeError(f"hexstr_to_bytes() wants str, got {type(hexstr).__name__}")
    try:
        return binascii.unhexlify(hexstr)
    except (binascii.Error, UnicodeEncodeError) as e:
        # binascii.Error is already a ValueError; a non-ASCII str raises
        # UnicodeEncodeError (also a ValueError): normalise the message.
        raise ValueError(f"not a hex string: {hexstr[:40]!r}") from e


def dict_to_bytes(d: dict) -> bytes:
    """JSON-encode a dict and return its UTF-8 bytes."""
    if not isinstance(d, dict):
        raise TypeError(f"dict_to_bytes() wants dict, got {type(d).__name__}")
    return json.dumps(d).encode("utf-8")


def bytes_to_dict(b: bytes) -> dict:
    """Decode UTF-8 JSON bytes that must hold an object.

    Raises ValueError for bad UTF-8, bad JSON, or any JSON value that is
    not an object (a peer's list or string is as wrong as garbage).
    """
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise TypeError(f"bytes_to_dict() wants bytes, got {type(b).__name__}")
    try:
        text = bytes(b).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError("not UTF-8") from e
    check_json_depth(text)  # a ValueError, before json recurses
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e}") from e
    if not isinstance(d, dict):
        # ValueError, not TypeError: to callers a non-object is bad input
        raise ValueError(f"JSON is not an object but {type(d).__name__}")  # noqa: TRY004
    return d


# -- the reference 0.24's other public helpers (wormhole.util) ------------

def HKDF(skm, outlen, salt=None, CTXinfo=b""):  # noqa: N802 (the reference's name)
    """HKDF-SHA256 (RFC 5869) of ``skm``: ``outlen`` bytes for the purpose
    ``CTXinfo`` (the Client-to-client protocol derives every key this way)."""
    # imported here: most users of this module only need the codecs
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF as _HKDF
    return _HKDF(algorithm=hashes.SHA256(), length=outlen, salt=salt,
                 info=CTXinfo).derive(skm)


def to_unicode(any):  # noqa: A002 (the reference's parameter name)
    """UTF-8 bytes decoded to str; anything else returned as it is."""
    if isinstance(any, (bytes, bytearray)):
        return bytes(any).decode("utf-8")
    return any


def estimate_free_space(target):
    """Bytes free on the file system that would hold ``target`` (a path
    that may not exist yet), or None when that cannot be found out."""
    where = os.path.dirname(os.path.abspath(target))
    try:
        return shutil.disk_usage(where).free
    except OSError:
        return None


def provides(interface):
    """An attrs validator (the reference 0.24's ``wormhole.util.provides``):
    the attribute's value must provide the zope ``interface``."""
    def validate(instance, attribute, value):
        if not interface.providedBy(value):
            raise TypeError(f"'{attribute.name}' must provide {interface!r}, "
                            f"which {value!r} does not")
    return validate
