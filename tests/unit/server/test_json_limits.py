"""The nesting of a client's JSON is measured before parsing, so no
message can make the parser recurse past the limit (docs/security.md,
"Mailbox server")."""

import json

from twisted.trial import unittest

from wormhole._jsonlimit import json_depth_exceeds
from wormhole_mailbox._messages import BadMessage, decode


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


class OneGuard(unittest.TestCase):
    """The client (``util.bytes_to_dict``, on text) and the Mailbox server
    (``decode``, on bytes) use the same guard, wormhole._jsonlimit."""

    def test_text_and_bytes_agree(self):
        """The same JSON as str and as UTF-8 bytes gets the same answer,
        non-ASCII and escaped quotes in strings included."""
        for text in (json.dumps({"é": nested(40), "s": '\u20ac[[[\\"'}),
                     json.dumps({"s": "[" * 80, "x": nested(10)}),
                     '{"a": "\u00e9' + "[" * 70 + '"}',
                     "[" * 70):
            for limit in (8, 32, 64):
                self.assertEqual(json_depth_exceeds(text, limit),
                                 json_depth_exceeds(text.encode("utf-8"), limit),
                                 (text[:30], limit))

    def test_the_client_check_raises_valueerror(self):
        """check_json_depth, the client's form, turns too deep into a
        ValueError naming the limit, and lets shallow text pass."""
        from wormhole._jsonlimit import check_json_depth
        check_json_depth(json.dumps(nested(64)))
        e = self.assertRaises(ValueError, check_json_depth, json.dumps(nested(65)))
        self.assertEqual(str(e), "JSON nested deeper than 64 levels")
