"""Peer and server text made safe for a terminal (wormhole._escape)."""
from twisted.trial import unittest

from wormhole._escape import excerpt


class Excerpt(unittest.TestCase):

    def test_short_unchanged(self):
        """A short string is kept whole; other values by their repr."""
        self.assertEqual(excerpt("boom"), "boom")
        self.assertEqual(excerpt({"a": [1]}), "{'a': [1]}")

    def test_long_cut(self):
        """A long value is cut to the limit, marked with '...'."""
        self.assertEqual(excerpt("x" * 1000, limit=10), "x" * 10 + "...")
        self.assertEqual(len(excerpt(list(range(10**5)))), 203)
