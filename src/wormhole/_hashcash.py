"""Hashcash v1 stamps for the server's proof-of-work permission.

Mailbox server protocol, "Permission to Use the Server": a server under attack may put
``"hashcash": {"bits": N, "resource": R}`` in ``permission-required``; the
client answers ``submit-permissions`` with a Hashcash v1 stamp
``1:BITS:DATE:RESOURCE:EXT:RAND:COUNTER`` whose SHA-1 starts with BITS zero
bits (format: hashcash.org, "stamp format (version 1)").

Why our own module: the only PyPI package (``hashcash`` 0.1.2) is the 2004
hashcash.org sample lightly ported to Python 3. Its checker rounds BITS
down to a multiple of 4 (so a server asking for 6 bits would accept 4),
its minter rounds up to whole hex digits (up to 8x the work), it salts with
the non-cryptographic ``random`` module, uses local time, and writes errors
to stderr instead of returning them. The format is small enough to do
right here, with hashlib's SHA-1.
"""

import base64
import hashlib
import itertools
import os
from datetime import datetime, timedelta, timezone

__all__ = ["leading_zero_bits", "mint", "verify"]

VERSION = "1"
_DIGEST_BITS = 160  # SHA-1
# RAND and COUNTER are drawn from the base64 alphabet (hashcash v1 format)
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
# DATE may be YYMMDD, YYMMDDhhmm or YYMMDDhhmmss; each form's resolution
# is how late within that span the stamp may have been minted.
_DATE_FORMATS = {
    6: ("%y%m%d", timedelta(days=1)),
    10: ("%y%m%d%H%M", timedelta(minutes=1)),
    12: ("%y%m%d%H%M%S", timedelta(seconds=1)),
}
# A stamp dated up to this far ahead of our clock is still taken: the
# minter's day may already have begun where it lives.
_FUTURE_SLACK = timedelta(days=1)


def _utc(now: datetime | None) -> datetime:
    """Current time, or ``now`` (a naive ``now`` is read as UTC)."""
    if now is None:
        return datetime.now(timezone.utc)
    if now.tzinfo is None:
        return now.replace(tzinfo=timezone.utc)
    return now.astimezone(timezone.utc)


def leading_zero_bits(digest: bytes) -> int:
    """How many leading bits of ``digest`` are zero."""
    value = int.from_bytes(digest, "big")
    return len(digest) * 8 - value.bit_length()


def _check_bits(bits: int) -> None:
    if not isinstance(bits, int) or isinstance(bits, bool) or not 0 <= bits <= _DIGEST_BITS:
        raise ValueError(f"bits must be an int from 0 to {_DIGEST_BITS}, not {bits!r}")


def mint(resource: str, bits: int, now: datetime | None = None) -> str:
    """Find a stamp for ``resource`` whose SHA-1 has ``bits`` leading zeros.

    Expected work is 2**bits hashes; 20 bits takes around a second.
    """
    if ":" in resource:
        # Mailbox server protocol, "Permission to Use the Server": "The
        # resource string cannot contain a `:` character"
        raise ValueError(f"hashcash resource must not contain ':': {resource!r}")
    _check_bits(bits)
    date = _utc(now).strftime("%y%m%d")
    rand = base64.b64encode(os.urandom(12)).decode("ascii")  # 16 chars, no padding
    prefix = f"{VERSION}:{bits}:{date}:{resource}::{rand}:"
    # Hash the fixed prefix once and only feed each counter to a copy.
    base = hashlib.sha1(prefix.encode("utf-8"))
    shift = _DIGEST_BITS - bits
    for counter in itertools.count():
        suffix = format(counter, "x")
        h = base.copy()
        h.update(suffix.encode("ascii"))
        if int.from_bytes(h.digest(), "big") >> shift == 0:
            return prefix + suffix
    raise AssertionError("unreachable")  # pragma: no cover


def _parse_date(text: str, current: datetime) -> tuple[datetime, timedelta] | None:
    """Read DATE; its two-digit year is taken in the century nearest ``current``.

    (``strptime``'s fixed pivot would put "69" in 1969.)
    """
    form = _DATE_FORMATS.get(len(text))
    if form is None or not (text.isascii() and text.isdigit()):
        return None
    fmt, resolution = form
    candidates = []
    for century in (current.year // 100 - 1, current.year // 100, current.year // 100 + 1):
        try:
            when = datetime.strptime(f"{century:02d}{text}", "%Y" + fmt[len("%y"):])
        except ValueError:
            continue  # e.g. Feb 29 exists in only some centuries
        candidates.append(when.replace(tzinfo=timezone.utc))
    if not candidates:
        return None
    return min(candidates, key=lambda when: abs(when - current)), resolution


def verify(
    stamp: str,
    resource: str,
    bits: int,
    now: datetime | None = None,
    max_age: timedelta = timedelta(days=2),
) -> bool:
    """True if ``stamp`` is a valid v1 stamp for ``resource`` worth ``bits``.

    Refuses (False, never an exception for a bad stamp): other versions,
    malformed fields, another resource, fewer claimed bits than ``bits``, a
    hash without the claimed zero bits, a date older than ``max_age`` or
    more than a day ahead. Double-spending is the caller's business.
    """
    _check_bits(bits)
    if not isinstance(stamp, str):
        return False
    fields = stamp.split(":")
    if len(fields) != 7:
        return False
    version, claimed, date, stamp_resource, _ext, rand, counter = fields
    if version != VERSION:
        return False
    if not (claimed.isascii() and claimed.isdigit()) or claimed != str(int(claimed)):
        return False  # also refuses "+6", " 6", "06" that int() would take
    claimed_bits = int(claimed)
    if not bits <= claimed_bits <= _DIGEST_BITS:
        return False
    if stamp_resource != resource:
        return False
    if not rand or not counter or not set(rand + counter) <= _B64_CHARS:
        return False
    current = _utc(now)
    parsed = _parse_date(date, current)
    if parsed is None:
        return False
    minted, resolution = parsed
    if minted + resolution < current - max_age:
        return False  # too old even if minted at the end of its DATE
    if minted > current + _FUTURE_SLACK:
        return False
    try:
        digest = hashlib.sha1(stamp.encode("utf-8")).digest()
    except UnicodeEncodeError:
        return False  # lone surrogates: not text that could cross the wire
    return leading_zero_bits(digest) >= claimed_bits
