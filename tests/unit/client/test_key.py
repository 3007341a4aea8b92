"""Unit tests for the Key machine (SPAKE2 and the version phase, ch. 8)."""

import json

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._crypto import decrypt_data, derive_phase_key
from wormhole._key import Key
from wormhole.timing import DebugTiming

from ...client.common import make_fake

APPID = "appid"


class KeyTests(unittest.TestCase):
    def build(self, side="side1", extra=None):
        events = []
        k = Key(APPID, {"app": 1}, side, extra or {}, DebugTiming())
        k.wire(make_fake(_interfaces.IBoss, "b", events),
               make_fake(_interfaces.IMailbox, "m", events),
               make_fake(_interfaces.IReceive, "r", events),
               make_fake(_interfaces.IOrder, "o", events))
        return k, events

    def test_provides_interface(self):
        """The Key machine provides IKey."""
        k, _ = self.build()
        verifyObject(_interfaces.IKey, k)

    def exchange(self, code1, code2, pake_first=False, extra=None):
        k1, e1 = self.build("side1", extra)
        k2, e2 = self.build("side2")
        k2.got_code(code2)
        pake2 = e2[0][2]
        if pake_first:
            k1.got_pake(pake2)
            self.assertEqual(e1, [])
            k1.got_code(code1)
        else:
            k1.got_code(code1)
            self.assertEqual(e1[0][:2], ("m.add_message", "pake"))
            k1.got_pake(pake2)
        return e1

    def check_key_events(self, e1):
        self.assertEqual([e[0] for e in e1],
                         ["m.add_message", "b.got_key", "m.add_message", "r.got_key", "o.got_key"])
        self.assertEqual(e1[0][1], "pake")
        key = e1[1][1]
        self.assertEqual(e1[3], ("r.got_key", key))
        name, phase, body = e1[2]
        self.assertEqual(phase, "version")
        return key, json.loads(decrypt_data(derive_phase_key(key, "side1", "version"), body))

    def test_code_then_pake(self):
        """With the code, our pake goes out; the peer's pake gives the key,
        our encrypted version, then Receive and Order learn the key."""
        e1 = self.exchange("1-a-b", "1-a-b")
        key, version = self.check_key_events(e1)
        self.assertEqual(version, {"app_versions": {"app": 1}})

    def test_pake_then_code(self):
        """A pake arriving before the code is kept until the code comes."""
        e1 = self.exchange("1-a-b", "1-a-b", pake_first=True)
        self.check_key_events(e1)

    def test_same_key_both_sides(self):
        """Both sides of a correct code agree on the key."""
        k1, e1 = self.build("side1")
        k2, e2 = self.build("side2")
        k1.got_code("4-x-y")
        k2.got_code("4-x-y")
        k1.got_pake(e2[0][2])
        k2.got_pake(e1[0][2])
        self.assertEqual(e1[1], e2[1])

    def test_wrong_code_gives_other_key(self):
        """Different codes give different keys (detected by Receive later)."""
        k1, e1 = self.build("side1")
        k2, e2 = self.build("side2")
        k1.got_code("4-x-y")
        k2.got_code("4-x-z")
        k1.got_pake(e2[0][2])
        k2.got_pake(e1[0][2])
        self.assertNotEqual(e1[1], e2[1])

    def test_dilation_extra(self):
        """The version plaintext carries the extra (Dilation) keys."""
        e1 = self.exchange("1-a-b", "1-a-b", extra={"can-dilate": ["ged"]})
        _, version = self.check_key_events(e1)
        self.assertEqual(version, {"app_versions": {"app": 1}, "can-dilate": ["ged"]})

    def test_bad_pake(self):
        """A malformed pake body makes the Boss scared, nothing else."""
        k, events = self.build()
        k.got_code("1-a-b")
        del events[:]
        k.got_pake(b"not json")
        self.assertEqual(events, [("b.scared",)])
