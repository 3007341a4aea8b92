"""Unit tests for the Send machine (Client-to-client protocol)."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._crypto import decrypt_data, derive_phase_key
from wormhole._send import Send
from wormhole.timing import DebugTiming

from ...client.common import make_fake

KEY = b"k" * 32


class SendTests(unittest.TestCase):
    def build(self):
        events = []
        s = Send("side1", DebugTiming())
        s.wire(make_fake(_interfaces.IMailbox, "m", events))
        return s, events

    def decrypt(self, event):
        name, phase, body = event
        self.assertEqual(name, "m.add_message")
        return phase, decrypt_data(derive_phase_key(KEY, "side1", phase), body)

    def test_provides_interface(self):
        """The Send machine provides ISend."""
        s, _ = self.build()
        verifyObject(_interfaces.ISend, s)

    def test_queue_until_key(self):
        """Messages sent before the verified key wait, then go in order,
        each encrypted under its own (side, phase) key."""
        s, events = self.build()
        s.send("0", b"a")
        s.send("1", b"b")
        self.assertEqual(events, [])
        s.got_verified_key(KEY)
        self.assertEqual([self.decrypt(e) for e in events], [("0", b"a"), ("1", b"b")])
        s.send("2", b"c")
        self.assertEqual(self.decrypt(events[2]), ("2", b"c"))
