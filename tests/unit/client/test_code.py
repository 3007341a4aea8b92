"""Unit tests for the Code, Allocator and Lister machines (Client API, "Code Management")."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._allocator import Allocator
from wormhole._code import Code
from wormhole._lister import Lister
from wormhole._status import AllocatedCode, NoCode, StatusTracker
from wormhole._wordlist import PGPWordList
from wormhole.timing import DebugTiming

from ...client.common import make_fake


class CodeTests(unittest.TestCase):
    def build(self):
        events = []
        self.status = StatusTracker(None, None)
        c = Code(DebugTiming(), self.status)
        c.wire(make_fake(_interfaces.IBoss, "b", events),
               make_fake(_interfaces.IAllocator, "a", events),
               make_fake(_interfaces.INameplate, "n", events),
               make_fake(_interfaces.IKey, "k", events),
               make_fake(_interfaces.IInput, "i", events, returns={"start": "HELPER"}))
        return c, events

    def test_provides_interface(self):
        """The Code machine provides ICode."""
        c, _ = self.build()
        verifyObject(_interfaces.ICode, c)

    def test_set_code(self):
        """set_code: nameplate to Nameplate, code to Boss and Key."""
        c, events = self.build()
        self.assertEqual(self.status.current.code, NoCode())
        c.set_code("123-purple-sausages")
        self.assertEqual(self.status.current.code, AllocatedCode())
        self.assertEqual(events, [("n.set_nameplate", "123"),
                                  ("b.got_code", "123-purple-sausages"),
                                  ("k.got_code", "123-purple-sausages")])

    def test_allocate_code(self):
        """allocate_code goes through the Allocator, then like set_code."""
        c, events = self.build()
        wl = PGPWordList()
        c.allocate_code(2, wl)
        self.assertEqual(events, [("a.allocate", 2, wl)])
        del events[:]
        c.allocated("4", "4-a-b")
        self.assertEqual(events, [("n.set_nameplate", "4"), ("b.got_code", "4-a-b"),
                                  ("k.got_code", "4-a-b")])

    def test_input_code(self):
        """input_code returns the Input helper; the nameplate is claimed
        before the words are typed, the code known after."""
        c, events = self.build()
        self.assertEqual(c.input_code(), "HELPER")
        self.assertEqual(events, [("i.start",)])
        del events[:]
        c.got_nameplate("4")
        self.assertEqual(events, [("n.set_nameplate", "4")])
        del events[:]
        c.finished_input("4-a-b")
        self.assertEqual(events, [("b.got_code", "4-a-b"), ("k.got_code", "4-a-b")])


class FixedWordlist:
    def choose_words(self, length):
        return "-".join(["word"] * length)

    def get_completions(self, prefix, num_words=2):
        return set()


class AllocatorTests(unittest.TestCase):
    def build(self):
        events = []
        a = Allocator(DebugTiming())
        a.wire(make_fake(_interfaces.IRendezvousConnector, "rc", events),
               make_fake(_interfaces.ICode, "c", events))
        return a, events

    def test_provides_interface(self):
        """The Allocator machine provides IAllocator."""
        a, _ = self.build()
        verifyObject(_interfaces.IAllocator, a)

    def test_allocate_connected(self):
        """allocate sends allocate; the answer becomes nameplate + words."""
        a, events = self.build()
        a.connected()
        a.allocate(3, FixedWordlist())
        self.assertEqual(events, [("rc.tx_allocate",)])
        a.rx_allocated("7")
        self.assertEqual(events[1:], [("c.allocated", "7", "7-word-word-word")])

    def test_allocate_before_connection(self):
        """An allocation asked for while disconnected is sent on connection."""
        a, events = self.build()
        a.allocate(2, FixedWordlist())
        self.assertEqual(events, [])
        a.connected()
        self.assertEqual(events, [("rc.tx_allocate",)])

    def test_reconnect_while_allocating(self):
        """A lost allocation is asked for again after reconnecting."""
        a, events = self.build()
        a.connected()
        a.allocate(2, FixedWordlist())
        a.lost()
        a.connected()
        self.assertEqual(events, [("rc.tx_allocate",), ("rc.tx_allocate",)])
        a.rx_allocated("7")
        a.rx_allocated("8")
        self.assertEqual(events[2:], [("c.allocated", "7", "7-word-word")])


class ListerTests(unittest.TestCase):
    def build(self):
        events = []
        lister = Lister(DebugTiming())
        lister.wire(make_fake(_interfaces.IRendezvousConnector, "rc", events),
                    make_fake(_interfaces.IInput, "i", events))
        return lister, events

    def test_provides_interface(self):
        """The Lister machine provides ILister."""
        lister, _ = self.build()
        verifyObject(_interfaces.ILister, lister)

    def test_refresh(self):
        """refresh sends list (now or on connection); the answer goes to Input."""
        lister, events = self.build()
        lister.refresh()
        self.assertEqual(events, [])
        lister.connected()
        self.assertEqual(events, [("rc.tx_list",)])
        lister.rx_nameplates(["1", "2"])
        self.assertEqual(events[1:], [("i.got_nameplates", ["1", "2"])])
        lister.refresh()
        self.assertEqual(events[2:], [("rc.tx_list",)])

    def test_reconnect_while_listing(self):
        """A list request lost with the connection is sent again."""
        lister, events = self.build()
        lister.connected()
        lister.refresh()
        lister.lost()
        lister.connected()
        self.assertEqual(events, [("rc.tx_list",), ("rc.tx_list",)])
