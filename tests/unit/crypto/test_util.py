"""wormhole.util: the text/hex/JSON codecs every layer shares."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.util import (
    bytes_to_dict,
    bytes_to_hexstr,
    dict_to_bytes,
    hexstr_to_bytes,
    to_bytes,
)

# JSON values that compare equal after a round trip (NaN never equals itself)
json_scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(
    allow_nan=False, allow_infinity=False
)
json_values = st.recursive(
    json_scalars,
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(), children, max_size=4)),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
json_non_objects = st.recursive(
    json_scalars, lambda children: st.lists(children, max_size=4), max_leaves=8
)

SETTINGS = settings(max_examples=200, deadline=None)


class ToBytes(unittest.TestCase):
    def test_utf8(self):
        """to_bytes encodes text as UTF-8."""
        self.assertEqual(to_bytes("h\u00e9"), b"h\xc3\xa9")

    def test_refuses_bytes(self):
        """to_bytes refuses bytes instead of passing them through unnoticed."""
        self.assertRaises(TypeError, to_bytes, b"abc")


class Hex(unittest.TestCase):
    @SETTINGS
    @given(st.binary())
    def test_round_trip(self, b):
        """Any bytes survive bytes_to_hexstr/hexstr_to_bytes; hex is lower-case."""
        s = bytes_to_hexstr(b)
        self.assertEqual(s, s.lower())
        self.assertEqual(len(s), 2 * len(b))
        self.assertEqual(hexstr_to_bytes(s), b)

    def test_upper_case_accepted(self):
        """Upper-case hex decodes too (a peer may send it)."""
        self.assertEqual(hexstr_to_bytes("ABcd"), b"\xab\xcd")

    def test_rejects_non_hex(self):
        """Odd length, non-hex letters, whitespace and non-ASCII are ValueErrors."""
        for bad in ["abc", "zz", "ab cd", " abcd", "\u00e9\u00e9", "0x00"]:
            self.assertRaises(ValueError, hexstr_to_bytes, bad)

    def test_rejects_non_str(self):
        """hexstr_to_bytes wants str, bytes_to_hexstr wants bytes."""
        self.assertRaises(TypeError, hexstr_to_bytes, b"abcd")
        self.assertRaises(TypeError, bytes_to_hexstr, "abcd")


class Dicts(unittest.TestCase):
    @SETTINGS
    @given(json_objects)
    def test_round_trip(self, d):
        """Any JSON object survives dict_to_bytes/bytes_to_dict."""
        b = dict_to_bytes(d)
        self.assertIsInstance(b, bytes)
        b.decode("utf-8")  # valid UTF-8
        self.assertEqual(bytes_to_dict(b), d)

    @SETTINGS
    @given(json_non_objects)
    def test_rejects_non_objects(self, value):
        """Valid JSON that is not an object (list, string, number, null) is refused."""
        with self.assertRaises(ValueError):
            bytes_to_dict(json.dumps(value).encode("utf-8"))

    @SETTINGS
    @given(st.binary())
    def test_arbitrary_bytes(self, b):
        """Arbitrary bytes either decode to a dict or raise ValueError, nothing else."""
        try:
            d = bytes_to_dict(b)
        except ValueError:
            return
        self.assertIsInstance(d, dict)

    def test_rejects_bad_utf8_and_garbage(self):
        """Bad UTF-8, truncated JSON and empty input are ValueErrors."""
        for bad in [b'{"a": "\xff"}', b'{"a": 1', b"", b"{}{}", b"nope"]:
            self.assertRaises(ValueError, bytes_to_dict, bad)

    def test_dict_to_bytes_refuses_non_dict(self):
        """dict_to_bytes only encodes dicts (the wire only carries objects)."""
        self.assertRaises(TypeError, dict_to_bytes, [1, 2])
