"""Unit tests for the Order machine (pake first; Client-to-client protocol)."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._order import Order

from ...client.common import make_fake


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


class Bounds(unittest.TestCase):
    """What waits for the pake is bounded (docs/security.md, "Mailbox client")."""

    def test_defaults(self):
        """1000 messages and 32 MiB of bodies by default."""
        o = Order()
        self.assertEqual((o._max_queued, o._max_queued_bytes), (1000, 32 * 1024 * 1024))

    def test_overflow(self):
        """One message more than max_queued, or a body that would exceed
        max_queued_bytes, before the pake raises OrderOverflow (the
        RendezvousConnector reports it as a ProtocolError); after the key
        nothing queues, so nothing overflows."""
        from wormhole._order import OrderOverflow
        events = []
        o = Order(max_queued=2, max_queued_bytes=10)
        o.wire(make_fake(_interfaces.IKey, "k", events),
               make_fake(_interfaces.IReceive, "r", events))
        o.got_message("s", "0", b"12345")
        e = self.assertRaises(OrderOverflow, o.got_message, "s", "1", b"123456")
        self.assertEqual(str(e), "2 messages (11 bytes) arrived before the peer's pake; the "
                                 "limit is 2 messages, 10 bytes (docs/security.md)")
        o.got_message("s", "1", b"12345")
        e = self.assertRaises(OrderOverflow, o.got_message, "s", "2", b"")
        self.assertIn("3 messages (10 bytes)", str(e))
        o.got_message("s", "pake", b"p")
        o.got_key()
        for i in range(5):
            o.got_message("s", str(i + 2), b"1234567890")
        self.assertEqual(len([e for e in events if e[0] == "r.got_message"]), 7)
