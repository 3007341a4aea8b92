"""The handshake line parser (Transit protocol, "Relay Handshake"), sans-I/O."""

from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole_relay._handshake import BadHandshake, Handshake, HandshakeParser

from ...relay._fakes import SIDE1, TOKEN, handshake


class Parse(unittest.TestCase):
    def test_new_form(self):
        """'please relay TOKEN for side SIDE\\n' gives the token and side,
        and no rest."""
        got = HandshakeParser().feed(handshake(TOKEN, SIDE1))
        self.assertEqual(got, (Handshake(TOKEN, SIDE1), b""))

    def test_old_form(self):
        """'please relay TOKEN\\n' (clients before sides) has side None."""
        got = HandshakeParser().feed(handshake(TOKEN))
        self.assertEqual(got, (Handshake(TOKEN, None), b""))

    def test_incomplete_then_complete(self):
        """Bytes without a newline are kept until the newline comes."""
        p = HandshakeParser()
        line = handshake(TOKEN, SIDE1)
        self.assertIsNone(p.feed(line[:10]))
        self.assertIsNone(p.feed(line[10:-1]))
        self.assertEqual(p.feed(line[-1:]), (Handshake(TOKEN, SIDE1), b""))

    def test_rest_is_returned(self):
        """Bytes after the newline come back as the rest, untouched."""
        got = HandshakeParser().feed(handshake(TOKEN) + b"more\n")
        self.assertEqual(got[1], b"more\n")

    def test_word_side(self):
        """A side of 16 word characters (not only hex) is accepted, as the
        reference relay does."""
        got = HandshakeParser().feed(handshake(TOKEN, "zZ_" + "0" * 13))
        self.assertEqual(got[0].side, "zZ_" + "0" * 13)

    def test_word_token(self):
        """A token of 64 word characters (uppercase, not hex, underscore)
        is accepted as it is, as the reference relay does."""
        for token in ("A" * 64, "g" * 64, "_" * 64, "Ab" * 32):
            got = HandshakeParser().feed(handshake(token, SIDE1))
            self.assertEqual(got[0].token, token)
            got = HandshakeParser().feed(handshake(token))
            self.assertEqual(got[0].token, token)

    def test_refused_lines(self):
        """Every malformed first line raises BadHandshake (each one was
        refused by the reference relay too)."""
        bad = [
            b"\n",
            b"hello world\n",
            b"please relay %s\n" % (b"a" * 62),          # short token
            b"please relay %s\n" % (b"a" * 66),          # long token
            b"please relay %s \n" % (b"a" * 63),         # not a word
            b"please relay %s\n" % ("\xe9" * 64).encode(),  # not ASCII
            b" please relay %s\n" % (b"a" * 64),         # leading space
            b"PLEASE RELAY %s\n" % (b"a" * 64),          # case
            b"please\trelay %s\n" % (b"a" * 64),         # tab
            b"please  relay %s\n" % (b"a" * 64),         # two spaces
            b"please relay %s\r\n" % (b"a" * 64),        # CRLF
            handshake(TOKEN, "1" * 15),                  # short side
            handshake(TOKEN, "1" * 17),                  # long side
            handshake(TOKEN, "-" * 16),                  # not a word
            b"please relay %s for side %s extra\n" % (TOKEN.encode(),
                                                      SIDE1.encode()),
            b"please relay %s for side \xff\xff\xff\xff\xff\xff\xff\xff"
            b"\xff\xff\xff\xff\xff\xff\xff\xff\n" % TOKEN.encode(),
            b"\x00" * 20 + b"\n",
            b"GET / HTTP/1.1\r\n",
        ]
        for line in bad:
            self.assertRaises(BadHandshake, HandshakeParser().feed, line)

    def test_too_long_without_newline(self):
        """More than max_length bytes without a newline are refused at
        once, so nobody can make the relay buffer without bound."""
        p = HandshakeParser(max_length=1024)
        self.assertIsNone(p.feed(b"x" * 1024))
        self.assertRaises(BadHandshake, p.feed, b"x")

    def test_megabyte_in_one_piece(self):
        """A megabyte with no newline is refused by the first feed."""
        self.assertRaises(BadHandshake, HandshakeParser().feed,
                          b"y" * 1000000)

    def test_long_line_with_newline(self):
        """A line longer than max_length is refused even if it ends."""
        p = HandshakeParser(max_length=200)
        self.assertRaises(BadHandshake, p.feed, b"z" * 200 + b"\n")


class Splits(unittest.TestCase):
    @given(st.lists(st.integers(min_value=0, max_value=110), max_size=6),
           st.booleans(), st.binary(max_size=20))
    def test_any_split_parses_the_same(self, cuts, with_side, rest):
        """However the bytes are split, the result is the same handshake
        and the same rest."""
        data = handshake(TOKEN, SIDE1 if with_side else None) + rest
        expected = HandshakeParser().feed(data)
        p = HandshakeParser()
        got = None
        prev = 0
        for cut in sorted(set(c for c in cuts if c < len(data))) + [len(data)]:
            piece = data[prev:cut]
            prev = cut
            if got is None:
                got = p.feed(piece)
            else:
                got = (got[0], got[1] + piece)
        self.assertEqual(got, expected)

    @given(st.binary(max_size=300))
    def test_random_bytes_never_crash(self, data):
        """Random bytes give None, a handshake, or BadHandshake: nothing
        else."""
        try:
            HandshakeParser().feed(data)
        except BadHandshake:
            pass
