"""Unit tests for the Order machine (pake first; spec 004 chapter 8)."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._order import Order

from .common import make_fake


class OrderTests(unittest.TestCase):
    def build(self):
        events = []
        o = Order()
        o.wire(make_fake(_interfaces.IKey, "k", events),
               make_fake(_interfaces.IReceive, "r", events))
        return o, events

    def test_provides_interface(self):
        """The Order machine provides IOrder."""
        o, _ = self.build()
        verifyObject(_interfaces.IOrder, o)

    def test_in_order(self):
        """pake goes to Key; later phases go to Receive once the key exists."""
        o, events = self.build()
        o.got_message("s", "pake", b"p")
        self.assertEqual(events, [("k.got_pake", b"p")])
        o.got_key()
        o.got_message("s", "version", b"v")
        self.assertEqual(events[1:], [("r.got_message", "s", "version", b"v")])

    def test_version_before_pake(self):
        """Phases arriving before the pake (or the key) wait, in arrival
        order, and are delivered when the key is ready."""
        o, events = self.build()
        o.got_message("s", "version", b"v")
        o.got_message("s", "0", b"zero")
        self.assertEqual(events, [])
        o.got_message("s", "pake", b"p")
        self.assertEqual(events, [("k.got_pake", b"p")])
        o.got_key()
        self.assertEqual(events[1:], [("r.got_message", "s", "version", b"v"),
                                      ("r.got_message", "s", "0", b"zero")])

    def test_late_pake_ignored(self):
        """A second pake after the key is ignored."""
        o, events = self.build()
        o.got_message("s", "pake", b"p")
        o.got_key()
        del events[:]
        o.got_message("s", "pake", b"p2")
        self.assertEqual(events, [])
