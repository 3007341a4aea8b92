# -*- test-case-name: tests.unit.server.test_permissions -*-
"""Mailbox server protocol, "Permission to Use the Server": `none` and `hashcash`.

The resource string of the hashcash challenge is fresh for every connection,
so a stamp minted for one connection is worthless on any other (no replay
across connections), and each connection accepts one submission only (no
replay within it). The stamp must also be recent and carry enough bits; the
checking itself is ``wormhole._hashcash.verify``.
"""

import datetime
import os

from zope.interface import implementer

from ._interfaces import IPermissionPolicy


def new_secret():
    """A per-connection resource string (no ':' allowed: Mailbox server
    protocol, "Permission to Use the Server")."""
    return os.urandom(12).hex()


@implementer(IPermissionPolicy)
class NoPermissions:
    """The reference's behaviour: no `permission-required` key at all, every
    client may bind."""

    def welcome_fields(self, connection_secret):
        return None

    def allows_without_submission(self):
        return True

    def check(self, submission, connection_secret, now):
        method, _stamp = submission
        if method == "none":
            return None
        return f"unsupported permission method {method!r}; this server " \
               "asks for none"


@implementer(IPermissionPolicy)
class Permissions:
    """Advertise ``none`` and/or ``hashcash``; demand one of them."""

    def __init__(self, allow_none, hashcash_bits=None,
                 max_age=datetime.timedelta(days=2)):
        if not allow_none and hashcash_bits is None:
            raise ValueError("a permission policy needs at least one method")
        self._allow_none = allow_none
        self._bits = hashcash_bits
        self._max_age = max_age

    def welcome_fields(self, connection_secret):
        methods = {}
        if self._allow_none:
            methods["none"] = {}
        if self._bits is not None:
            methods["hashcash"] = {"bits": self._bits,
                                   "resource": connection_secret}
        return methods

    def allows_without_submission(self):
        return self._allow_none

    def check(self, submission, connection_secret, now):
        method, stamp = submission
        if method == "none":
            if self._allow_none:
                return None
            return "permission denied: this server requires hashcash " \
                   "(see 'permission-required' in the welcome message)"
        if method == "hashcash" and self._bits is not None:
            if stamp is None:
                return "permission denied: submit-permissions with method " \
                       "hashcash needs a 'stamp'"
            from wormhole import _hashcash  # another engineer's module
            when = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
            ok = _hashcash.verify(stamp, connection_secret, self._bits,
                                  now=when, max_age=self._max_age)
            if ok:
                return None
            return (f"permission denied: the hashcash stamp is not a valid "
                    f"v1 stamp of at least {self._bits} bits for resource "
                    f"{connection_secret!r} dated within "
                    f"{self._max_age.days} days")
        return f"permission denied: unsupported permission method " \
               f"{method!r}; use one named in 'permission-required'"


def parse_permissions(spec):
    """``--permissions`` value: none | hashcash:BITS | none+hashcash:BITS."""
    if spec is None:
        return NoPermissions()
    allow_none = False
    bits = None
    for part in spec.split("+"):
        if part == "none":
            allow_none = True
        elif part.startswith("hashcash:"):
            try:
                bits = int(part[len("hashcash:"):])
            except ValueError:
                raise ValueError(f"bad hashcash bits in {spec!r}") from None
            if not 1 <= bits <= 40:
                raise ValueError("hashcash bits must be within 1..40")
        else:
            raise ValueError(f"unknown permission method {part!r} in "
                             f"{spec!r}; use none, hashcash:BITS or both "
                             "joined by '+'")
    return Permissions(allow_none, bits)
