# -*- test-case-name: tests.unit.relay.test_handshake -*-
"""The relay handshake line, parsed sans-I/O (Transit protocol, "Relay Handshake").

A client first writes ``please relay TOKEN for side SIDE\\n`` (clients
since magic-wormhole 0.10) or ``please relay TOKEN\\n`` (older ones):
clients send TOKEN as 64 lowercase hex digits (the hex of a 32-byte HKDF
output) and SIDE as 16 hex digits. The wire decides (docs/protocols.md): the
reference relay accepts any 64 and 16 ASCII word characters (``[A-Za-z0-9_]``)
and compares tokens as they are (``AB..`` and ``ab..`` do not pair), so we
do too. It refuses short or long tokens and sides, CRLF, other spacing and
extra words (tests/relay/test_interop.py runs these against both).
"""

import re

_HANDSHAKE = re.compile(
    rb"please relay (?P<token>[A-Za-z0-9_]{64})"
    rb"(?: for side (?P<side>[A-Za-z0-9_]{16}))?\n\Z")


class Handshake:
    __slots__ = ("token", "side")

    def __init__(self, token, side):
        self.token = token  # str
        self.side = side    # str, or None for the old form

    def __repr__(self):
        return f"<Handshake {self.token[:8]}.. side={self.side!r}>"

    def __eq__(self, other):
        return (isinstance(other, Handshake)
                and (self.token, self.side) == (other.token, other.side))


class BadHandshake(Exception):
    """The first line is not a handshake (or is too long to be one)."""


class HandshakeParser:
    """Collects bytes until the first newline.

    ``feed`` returns None while the line is incomplete, else
    ``(Handshake, rest)`` where ``rest`` is whatever followed the newline;
    it raises BadHandshake for a line that is not a handshake, and for
    ``max_length`` bytes without a newline, so a client cannot make us
    buffer without bound.
    """

    def __init__(self, max_length=1024):
        self._max = max_length
        self._buf = b""

    def feed(self, data):
        # only the new bytes can hold the newline: no rescanning
        nl = data.find(b"\n")
        if nl == -1:
            self._buf += data
            if len(self._buf) > self._max:
                raise BadHandshake(f"no newline in the first {self._max + 1} "
                                   "bytes")
            return None
        line = self._buf + data[:nl + 1]
        rest = data[nl + 1:]
        self._buf = b""
        if len(line) > self._max:
            raise BadHandshake(f"handshake line longer than {self._max} "
                               "bytes")
        m = _HANDSHAKE.match(line)
        if m is None:
            raise BadHandshake("expected 'please relay TOKEN for side "
                               "SIDE\\n'")
        side = m.group("side")
        return (Handshake(m.group("token").decode("ascii"),
                          side.decode("ascii") if side is not None else None),
                rest)
