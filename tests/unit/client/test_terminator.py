"""Unit tests for the Terminator machine (Client API, "Closing")."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._terminator import Terminator

from ...client.common import make_fake


class TerminatorTests(unittest.TestCase):
    def build(self):
        events = []
        t = Terminator()
        t.wire(make_fake(_interfaces.IBoss, "b", events),
               make_fake(_interfaces.IRendezvousConnector, "rc", events),
               make_fake(_interfaces.INameplate, "n", events),
               make_fake(_interfaces.IMailbox, "m", events))
        return t, events

    def test_provides_interface(self):
        """The Terminator provides ITerminator."""
        t, _ = self.build()
        verifyObject(_interfaces.ITerminator, t)

    def test_nameplate_first(self):
        """close closes both; the connection stops after both are done."""
        t, events = self.build()
        t.close("happy")
        self.assertEqual(events, [("n.close",), ("m.close", "happy")])
        del events[:]
        t.nameplate_done()
        self.assertEqual(events, [])
        t.mailbox_done()
        self.assertEqual(events, [("rc.stop",)])
        t.stopped()
        self.assertEqual(events[1:], [("b.closed",)])

    def test_mailbox_first(self):
        """Either order of nameplate_done/mailbox_done stops the connection."""
        t, events = self.build()
        t.close("lonely")
        del events[:]
        t.mailbox_done()
        self.assertEqual(events, [])
        t.nameplate_done()
        self.assertEqual(events, [("rc.stop",)])

    def test_connection_failed_while_closing(self):
        """If the server is gone for good while we wait for it, stop now."""
        t, events = self.build()
        t.close("errory")
        del events[:]
        t.connection_failed()
        self.assertEqual(events, [("rc.stop",)])
        t.nameplate_done()
        t.mailbox_done()
        t.stopped()
        self.assertEqual(events[1:], [("b.closed",)])

    def test_connection_failed_before_close(self):
        """After the server refused us, close() does not wait for it."""
        t, events = self.build()
        t.connection_failed()
        self.assertEqual(events, [])
        t.close("errory")
        self.assertEqual(events, [("n.close",), ("m.close", "errory"), ("rc.stop",)])
