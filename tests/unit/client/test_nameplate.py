"""Unit tests for the Nameplate machine (Mailbox server protocol, "Nameplates")."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._nameplate import Nameplate
from wormhole._status import AllocatedCode, ConsumedCode, StatusTracker
from wormhole._wordlist import PGPWordList

from ...client.common import make_fake


class NameplateTests(unittest.TestCase):
    def build(self):
        events = []
        self.status = StatusTracker(None, None)
        n = Nameplate(self.status)
        m = make_fake(_interfaces.IMailbox, "m", events)
        i = make_fake(_interfaces.IInput, "i", events)
        rc = make_fake(_interfaces.IRendezvousConnector, "rc", events)
        t = make_fake(_interfaces.ITerminator, "t", events)
        n.wire(m, i, rc, t)
        return n, events

    def strip_wordlist(self, events):
        # the word list object is checked once, then compared by kind
        out = []
        for e in events:
            if e[0] == "i.got_wordlist":
                self.assertIsInstance(e[1], PGPWordList)
                e = ("i.got_wordlist",)
            out.append(e)
        return out

    def test_provides_interface(self):
        """The Nameplate machine provides INameplate."""
        n, _ = self.build()
        verifyObject(_interfaces.INameplate, n)

    def test_set_then_connect(self):
        """A nameplate set while disconnected is claimed once connected,
        and the claimed mailbox goes to the Mailbox."""
        n, events = self.build()
        n.set_nameplate("1")
        self.assertEqual(self.strip_wordlist(events), [("i.got_wordlist",)])
        del events[:]
        n.connected()
        self.assertEqual(events, [("rc.tx_claim", "1")])
        del events[:]
        n.rx_claimed("mbox1")
        self.assertEqual(events, [("m.got_mailbox", "mbox1")])

    def test_connect_then_set(self):
        """When connected, setting the nameplate sends the claim at once."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        self.assertEqual(self.strip_wordlist(events), [("rc.tx_claim", "1"), ("i.got_wordlist",)])

    def test_release_then_close(self):
        """release() sends release; close() after rx_released is done at once."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        del events[:]
        self.status.code(AllocatedCode())
        n.release()
        self.assertEqual(events, [("rc.tx_release", "1")])
        # releasing because the peer showed up: the code is used up
        self.assertEqual(self.status.current.code, ConsumedCode())
        del events[:]
        n.rx_released()
        self.assertEqual(events, [])
        n.close()
        self.assertEqual(events, [("t.nameplate_done",)])

    def test_close_while_releasing(self):
        """close() while the release is in flight waits for rx_released."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        n.release()
        del events[:]
        n.close()
        self.assertEqual(events, [])
        n.rx_released()
        self.assertEqual(events, [("t.nameplate_done",)])

    def test_close_while_claimed(self):
        """close() while claimed releases first, then reports done."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        del events[:]
        n.close()
        self.assertEqual(events, [("rc.tx_release", "1")])
        del events[:]
        n.rx_released()
        self.assertEqual(events, [("t.nameplate_done",)])

    def test_close_without_nameplate(self):
        """close() with no nameplate is done immediately, connected or not."""
        n, events = self.build()
        n.close()
        self.assertEqual(events, [("t.nameplate_done",)])
        n2, events2 = self.build()
        n2.connected()
        n2.close()
        self.assertEqual(events2, [("t.nameplate_done",)])

    def test_reconnect_while_claiming(self):
        """A claim in flight when the connection drops is sent again."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.lost()
        del events[:]
        n.connected()
        self.assertEqual(events, [("rc.tx_claim", "1")])
        n.rx_claimed("mbox1")
        self.assertEqual(events[-1], ("m.got_mailbox", "mbox1"))

    def test_reconnect_while_claimed(self):
        """A held claim is re-sent on reconnection; the answer is ignored."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        n.lost()
        del events[:]
        n.connected()
        self.assertEqual(events, [("rc.tx_claim", "1")])
        del events[:]
        n.rx_claimed("mbox1")
        self.assertEqual(events, [])

    def test_reconnect_while_releasing(self):
        """A release in flight is sent again after reconnecting."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        n.release()
        n.lost()
        del events[:]
        n.connected()
        self.assertEqual(events, [("rc.tx_release", "1")])

    def test_close_while_disconnected(self):
        """close() while disconnected and claimed releases on reconnection."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        n.lost()
        del events[:]
        n.close()
        self.assertEqual(events, [])
        n.connected()
        self.assertEqual(events, [("rc.tx_release", "1")])
        n.rx_released()
        self.assertEqual(events[-1], ("t.nameplate_done",))

    def test_release_is_idempotent(self):
        """A second release() (every new peer message asks) sends nothing."""
        n, events = self.build()
        n.connected()
        n.set_nameplate("1")
        n.rx_claimed("mbox1")
        n.release()
        del events[:]
        n.release()
        n.rx_released()
        n.release()
        self.assertEqual(events, [])
