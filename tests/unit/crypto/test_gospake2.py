"""wormhole-william's key when its SPAKE2 (gospake2) disagrees with SPAKE2
(``wormhole._gospake2``, docs/interop.md "wormhole-william 1.0.6"), on three
real exchanges with wormhole-william 1.0.6 (tests/data/
wormhole_william_key_cases.json), and what the Key and Receive machines
do with it: try both keys on the first message of a peer that is not a
Python implementation, send our version under the one that opened it."""
import json
import os

from twisted.trial import unittest

from wormhole import _interfaces
from wormhole._crypto import (
    DecryptError,
    decrypt_data,
    derive_phase_key,
    encrypt_data,
    finish_pake,
    make_pake,
)
from wormhole._gospake2 import SPAKE2, gospake2_key
from wormhole._key import Key
from wormhole._order import Order
from wormhole._receive import Receive
from wormhole.timing import DebugTiming

from ..._paths import REPO_ROOT
from ...client.common import make_fake

with open(os.path.join(REPO_ROOT, "tests", "data", "wormhole_william_key_cases.json"),
          encoding="ascii") as _f:
    CASES = json.load(_f)["cases"]
APPID = "lothar.com/wormhole/text-or-file-xfer"


def their_version(case, key):
    """The peer's first message opened with ``key`` (DecryptError if not)."""
    return decrypt_data(derive_phase_key(key, case["their_side"], case["their_phase"]),
                        bytes.fromhex(case["their_encrypted"]))


def finished(case):
    sp = SPAKE2.from_serialized(case["sp"].encode("ascii"))
    return sp, finish_pake(sp, case["their_body"].encode("ascii"))


class GospakeKey(unittest.TestCase):

    def test_three_real_disagreements(self):
        """SPAKE2's key (the one we derived then) does not open
        wormhole-william's version; the key gospake2_key gives does."""
        for case in CASES:
            sp, key = finished(case)
            self.assertEqual(key.hex(), case["key"])
            self.assertRaises(DecryptError, their_version, case, key)
            alternative = gospake2_key(sp)
            self.assertIsNotNone(alternative)
            self.assertEqual(json.loads(their_version(case, alternative)), {"app_versions": {}})

    def test_none_when_K_needs_all_32_bytes(self):
        """An exchange whose K does not end in a zero byte: no other key
        (gospake2 derives SPAKE2's own then)."""
        a, body_a = make_pake("4-purple-sausages", APPID, entropy_f=lambda n: b"\x01" * n)
        b, body_b = make_pake("4-purple-sausages", APPID, entropy_f=lambda n: b"\x02" * n)
        self.assertEqual(finish_pake(a, body_b), finish_pake(b, body_a))
        self.assertNotEqual(a.transcript_parts[2][-1], 0)
        self.assertIsNone(gospake2_key(a))


def machines(events):
    """Key, Receive and Order wired to each other, the rest fakes."""
    key = Key(APPID, {}, "oursid", {}, DebugTiming())
    receive = Receive("oursid", DebugTiming())
    order = Order()
    boss = make_fake(_interfaces.IBoss, "b", events)
    key.wire(boss, make_fake(_interfaces.IMailbox, "m", events), receive, order)
    receive.wire(boss, make_fake(_interfaces.ISend, "s", events), key)
    order.wire(key, receive)
    return key, order


def at_have_code(key, case):
    """The Key machine as it was in that exchange: our pake sent."""
    key._restore({"state": "S10_have_code", "versions": {}, "version_extra": {},
                  "their_pake": None, "spake2": case["sp"]})


class BothKeysTried(unittest.TestCase):

    def test_wormhole_william_gets_our_version_under_its_key(self):
        """Its pake (Go's compact JSON), a K it hashes differently: no
        version of ours yet; its version opens with its key, and ours then
        goes under that key, before we are happy."""
        case = CASES[0]
        events = []
        key, order = machines(events)
        at_have_code(key, case)
        order.got_message("theirside", "pake", case["their_body"].encode("ascii"))
        self.assertEqual(events, [])
        order.got_message(case["their_side"], case["their_phase"],
                          bytes.fromhex(case["their_encrypted"]))
        names = [e[0] for e in events]
        self.assertEqual(names[:3], ["b.got_key", "m.add_message", "b.happy"])
        sp, _ = finished(case)
        alternative = gospake2_key(sp)
        self.assertEqual(events[0], ("b.got_key", alternative))
        _, phase, body = events[1]
        self.assertEqual(phase, "version")
        decrypt_data(derive_phase_key(alternative, "oursid", "version"), body)
        self.assertIn(("s.got_verified_key", alternative), events)

    def test_a_python_peer_gets_our_version_at_once(self):
        """The same pake in a Python implementation's JSON: SPAKE2's key,
        our version at once, as with the reference (two of ours never wait
        for each other)."""
        case = CASES[0]
        events = []
        key, order = machines(events)
        at_have_code(key, case)
        body = case["their_body"].replace('":"', '": "').encode("ascii")
        order.got_message("theirside", "pake", body)
        self.assertEqual([e[0] for e in events], ["b.got_key", "m.add_message"])
        self.assertEqual(events[0][1].hex(), case["key"])

    def test_another_go_or_rust_peer_with_spake2_s_key(self):
        """A compact-JSON peer whose SPAKE2 is right: its version opens
        with SPAKE2's key, and ours goes under that key."""
        case = CASES[0]
        events = []
        key, order = machines(events)
        at_have_code(key, case)
        order.got_message("theirside", "pake", case["their_body"].encode("ascii"))
        spake2_key = bytes.fromhex(case["key"])
        version = encrypt_data(derive_phase_key(spake2_key, "theirside", "version"), b"{}")
        order.got_message("theirside", "version", version)
        self.assertEqual(events[0], ("b.got_key", spake2_key))
        self.assertEqual(events[1][:2], ("m.add_message", "version"))

    def test_neither_key_opens_it(self):
        """A first message neither key opens: scared, and no version of
        ours ever goes."""
        case = CASES[0]
        events = []
        key, order = machines(events)
        at_have_code(key, case)
        order.got_message("theirside", "pake", case["their_body"].encode("ascii"))
        order.got_message("theirside", "version",
                          encrypt_data(derive_phase_key(b"x" * 32, "theirside", "version"), b"{}"))
        self.assertEqual(events, [("b.scared",)])

    def test_both_keys_survive_the_journal(self):
        """Receive written to a journal between the two keys and the
        peer's first message (Client API, "Serialization") still tries both."""
        events = []
        first = Receive("oursid", DebugTiming())
        first.wire(make_fake(_interfaces.IBoss, "b", events),
                   make_fake(_interfaces.ISend, "s", events),
                   make_fake(_interfaces.IKey, "k", events))
        first.got_keys(b"a" * 32, b"b" * 32)
        record = json.loads(json.dumps(first.serialize()))
        again = Receive("oursid", DebugTiming())
        again.wire(make_fake(_interfaces.IBoss, "b", events),
                   make_fake(_interfaces.ISend, "s", events),
                   make_fake(_interfaces.IKey, "k", events))
        again._restore(record)
        again.got_message("theirside", "version",
                          encrypt_data(derive_phase_key(b"b" * 32, "theirside", "version"), b"{}"))
        self.assertEqual(events[0], ("k.key_settled", b"b" * 32))
        self.assertEqual(events[1], ("b.happy",))
