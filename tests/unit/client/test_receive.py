"""Unit tests for the Receive machine (mood and verifier; Client-to-client protocol)."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._crypto import derive_phase_key, derive_verifier, encrypt_data
from wormhole._receive import Receive
from wormhole.timing import DebugTiming

from ...client.common import make_fake

KEY = b"k" * 32


def enc(side, phase, plaintext, key=KEY):
    return encrypt_data(derive_phase_key(key, side, phase), plaintext)


class ReceiveTests(unittest.TestCase):
    def build(self):
        events = []
        r = Receive("side1", DebugTiming())
        r.wire(make_fake(_interfaces.IBoss, "b", events),
               make_fake(_interfaces.ISend, "s", events),
               make_fake(_interfaces.IKey, "k", events))
        return r, events

    def test_provides_interface(self):
        """The Receive machine provides IReceive."""
        r, _ = self.build()
        verifyObject(_interfaces.IReceive, r)

    def test_good(self):
        """The first good message makes us happy, gives the verifier and the
        key to Send, then every message goes to the Boss."""
        r, events = self.build()
        r.got_key(KEY)
        r.got_message("side2", "version", enc("side2", "version", b"{}"))
        self.assertEqual(events, [("b.happy",), ("b.got_verifier", derive_verifier(KEY)),
                                  ("s.got_verified_key", KEY),
                                  ("b.got_message", "version", b"{}")])
        del events[:]
        r.got_message("side2", "0", enc("side2", "0", b"zero"))
        self.assertEqual(events, [("b.got_message", "0", b"zero")])

    def test_bad_first(self):
        """A first message that does not decrypt makes us scared, once."""
        r, events = self.build()
        r.got_key(KEY)
        r.got_message("side2", "version", enc("side2", "version", b"{}", key=b"x" * 32))
        self.assertEqual(events, [("b.scared",)])
        r.got_message("side2", "0", enc("side2", "0", b"zero"))
        self.assertEqual(events, [("b.scared",)])

    def test_bad_later(self):
        """A bad message after good ones also makes us scared."""
        r, events = self.build()
        r.got_key(KEY)
        r.got_message("side2", "version", enc("side2", "version", b"{}"))
        del events[:]
        r.got_message("side2", "0", b"garbage" * 10)
        self.assertEqual(events, [("b.scared",)])

    def test_wrong_side_key(self):
        """A message encrypted for another (side, phase) does not decrypt."""
        r, events = self.build()
        r.got_key(KEY)
        r.got_message("side2", "0", enc("side2", "1", b"zero"))
        self.assertEqual(events, [("b.scared",)])
