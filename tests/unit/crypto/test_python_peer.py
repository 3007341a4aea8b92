"""The rule that tells a Python peer's ``pake`` body from others
(``wormhole._key._from_python``; docs/interop.md, "wormhole-william 1.0.6:
one exchange in a few hundred gets two keys") reads a byte-level detail
of the peer's JSON: the space ``json.dumps`` puts after the colon.

What is at stake: the rule sees our own bodies too. A body of ours that
the rule did not take for a Python peer's would make each of two of our
clients treat the other as wormhole-william: in the one exchange in 256
where that derives two keys, each holds its ``version`` back until the
other's first message arrives, and neither ever sends one. So
``util.dict_to_bytes`` (which writes our bodies) and the rule must change
together; these tests fail when one moves without the other.
"""

import json

from twisted.trial import unittest

from wormhole._crypto import encode_pake_body, make_pake
from wormhole._key import _from_python
from wormhole.util import dict_to_bytes

MSG = bytes([0x53]) + bytes(range(32))


class PythonPeerRule(unittest.TestCase):
    def test_our_bodies_are_taken_for_a_python_peers(self):
        """Every body we send, as make_pake and encode_pake_body write it
        through util.dict_to_bytes, is a Python peer's to the rule: two of
        ours never wait for each other's first message."""
        self.assertTrue(_from_python(encode_pake_body(MSG)))
        for code in ("1-a-b", "7-purple-sausages"):
            _sp, body = make_pake(code, "appid", lambda n: b"\x01" * n)
            self.assertTrue(_from_python(body), body)

    def test_dict_to_bytes_keeps_json_dumps_spacing(self):
        """dict_to_bytes writes ``json.dumps``' default separators (", " and
        ": "), the bytes the reference writes too: changing them (compact
        JSON, say) is a change to the peer rule first."""
        self.assertEqual(dict_to_bytes({"pake_v1": "00", "x": 1}),
                         b'{"pake_v1": "00", "x": 1}')
        self.assertEqual(dict_to_bytes({"pake_v1": MSG.hex()}),
                         json.dumps({"pake_v1": MSG.hex()}).encode("ascii"))

    def test_compact_bodies_are_not(self):
        """wormhole-william's body (Go's encoding/json: no spaces) and a
        Rust client's are not a Python peer's: those get both keys tried."""
        compact = json.dumps({"pake_v1": MSG.hex()}, separators=(",", ":"))
        self.assertFalse(_from_python(compact.encode("ascii")))

    def test_planted_compact_encoder_breaks_the_rule(self):
        """What the first test guards against, planted: had dict_to_bytes
        written compact JSON, our own body would not pass the rule."""
        planted = json.dumps({"pake_v1": MSG.hex()}, separators=(",", ":")).encode()
        self.assertFalse(_from_python(planted))
        self.assertNotEqual(planted, encode_pake_body(MSG))
