"""Issue 11: the nesting of a client's JSON is measured before parsing,
so no message can make the parser recurse past the limit."""

import json

from twisted.trial import unittest

from wormhole_mailbox._messages import BadMessage, decode, json_depth_exceeds


def nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


class Depth(unittest.TestCase):
    def test_limit_exact(self):
        """Nesting of exactly the limit passes; one more level is refused
        (the outer object counts as a level)."""
        ok = json.dumps({"type": "ping", "x": nested(31)}).encode()
        deep = json.dumps({"type": "ping", "x": nested(32)}).encode()
        self.assertFalse(json_depth_exceeds(ok, 32))
        self.assertTrue(json_depth_exceeds(deep, 32))
        self.assertEqual(decode(ok, 10 ** 6, 32)["type"], "ping")
        e = self.assertRaises(BadMessage, decode, deep, 10 ** 6, 32)
        self.assertIn("more than 32 levels deep", e.error)
        self.assertEqual(e.orig, f"<{len(deep)} bytes, nested too deeply, "
                                 "not parsed>")

    def test_brackets_in_strings(self):
        """Brackets inside strings (escaped quotes included) are text, not
        nesting."""
        text = json.dumps({"type": "add", "phase": "[" * 100 + '\\"{' * 50,
                           "body": "00"}).encode()
        self.assertFalse(json_depth_exceeds(text, 32))
        self.assertEqual(decode(text, 10 ** 6, 32)["type"], "add")

    def test_unbalanced_and_huge(self):
        """A megabyte of opening brackets (never closed, never parseable)
        is refused as too deep, not handed to the parser."""
        payload = b"[" * (1024 * 1024)
        self.assertTrue(json_depth_exceeds(payload, 32))
        e = self.assertRaises(BadMessage, decode, payload, 2 * 1024 * 1024,
                              32)
        self.assertIn("levels deep", e.error)

    def test_many_shallow(self):
        """Many shallow arrays side by side are not deep."""
        payload = json.dumps({"type": "ping", "x": [[1]] * 10000}).encode()
        self.assertFalse(json_depth_exceeds(payload, 32))
