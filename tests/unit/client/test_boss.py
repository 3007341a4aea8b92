"""Unit tests for the Boss: moods, results, routing (Client API, "Events" to "Closing").

The Boss builds its own neighbours; here the ones it talks to are replaced
by recording fakes right after construction.
"""

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces, errors
from wormhole._boss import Boss
from wormhole._eventual import EventualQueue
from wormhole.journal import ImmediateJournal
from wormhole.timing import DebugTiming

from ...client.common import make_fake


class BossTests(unittest.TestCase):
    def build(self, dilator=None):
        events = []
        w = make_fake(_interfaces.IWormholeEvents, "w", events)
        clock = Clock()
        b = Boss(w, "side1", "ws://127.0.0.1:1/v1", "appid", {}, ("python", "0"), clock,
                 EventualQueue(clock), ImmediateJournal(), None, DebugTiming(),
                 dilator=dilator)
        b._RC = make_fake(_interfaces.IRendezvousConnector, "rc", events)
        b._C = make_fake(_interfaces.ICode, "c", events)
        b._S = make_fake(_interfaces.ISend, "s", events)
        b._T = make_fake(_interfaces.ITerminator, "t", events)
        return b, events

    def test_provides_interface(self):
        """The Boss provides IBoss."""
        b, _ = self.build()
        verifyObject(_interfaces.IBoss, b)

    def test_happy_path(self):
        """Code, key, happy, verifier, version, phases in order, close happy."""
        b, events = self.build()
        b.start()
        b.rx_welcome({"w": 1})
        b.set_code("1-a-b")
        b.got_code("1-a-b")
        b.got_key(b"key")
        b.send(b"out0")
        b.send(b"out1")
        b.happy()
        b.got_verifier(b"ver")
        b.got_message("version", b'{"app_versions": {"x": 1}, "other": 2}')
        b.got_message("1", b"second")
        b.got_message("0", b"first")
        b.got_message("dilate-0", b"ignored for now")
        b.got_message("unknown", b"ignored")
        b.close()
        b.closed()
        self.assertEqual(events, [
            ("rc.start",), ("w.got_welcome", {"w": 1}), ("c.set_code", "1-a-b"),
            ("w.got_code", "1-a-b"), ("w.got_key", b"key"),
            ("s.send", "0", b"out0"), ("s.send", "1", b"out1"),
            ("w.got_verifier", b"ver"), ("w.got_versions", {"x": 1}),
            ("w.received", b"first"), ("w.received", b"second"),
            ("t.close", "happy"), ("w.closed", "happy")])

    def test_dilator_hook(self):
        """The Dilator hears the key, the peer's whole version dict and each
        dilate-N phase (in arrival order); the null one is the default."""
        from wormhole._dilator_hook import NullDilator
        verifyObject(_interfaces.IDilator, NullDilator())
        events = []
        b, wevents = self.build(dilator=make_fake(_interfaces.IDilator, "d", events))
        b.set_code("1-a-b")
        b.got_key(b"key")
        b.happy()
        b.got_message("version", b'{"app_versions": {}, "can-dilate": ["ged"]}')
        b.got_message("dilate-1", b"second")
        b.got_message("dilate-0", b"first")
        self.assertEqual(events, [("d.got_key", b"key"),
                                  ("d.got_wormhole_versions",
                                   {"app_versions": {}, "can-dilate": ["ged"]}),
                                  ("d.received_dilate", b"second"),
                                  ("d.received_dilate", b"first")])

    def test_lonely(self):
        """close() before happy: mood lonely, result LonelyError."""
        b, events = self.build()
        b.set_code("1-a-b")
        b.close()
        self.assertEqual(events[-1], ("t.close", "lonely"))
        b.closed()
        self.assertIsInstance(events[-1][1], errors.LonelyError)

    def test_scary(self):
        """scared: mood scary, result WrongPasswordError; later close ignored."""
        b, events = self.build()
        b.set_code("1-a-b")
        b.happy()
        b.scared()
        self.assertEqual(events[-1], ("t.close", "scary"))
        b.close()
        b.got_message("0", b"late")
        b.closed()
        self.assertEqual(len([e for e in events if e[0] == "t.close"]), 1)
        self.assertIsInstance(events[-1][1], errors.WrongPasswordError)

    def test_server_error(self):
        """A server error closes errory with ServerError naming the command."""
        b, events = self.build()
        b.rx_error("crowded", {"type": "claim"})
        self.assertEqual(events[-1], ("t.close", "errory"))
        b.closed()
        self.assertIsInstance(events[-1][1], errors.ServerError)
        self.assertEqual(str(events[-1][1]), "crowded")
        self.assertEqual(events[-1][1].orig, {"type": "claim"})

    def test_bad_version(self):
        """A version message that is not a JSON object is a ProtocolError."""
        b, events = self.build()
        b.set_code("1-a-b")
        b.happy()
        b.got_message("version", b"[]")
        self.assertEqual(events[-1], ("t.close", "errory"))

    def test_only_one_code(self):
        """Only one of allocate/input/set_code, once; after close they
        raise WormholeClosedError, an OnlyOneCodeError as the reference
        0.24 raises there."""
        b, events = self.build()
        b.allocate_code(2)
        self.assertRaises(errors.OnlyOneCodeError, b.set_code, "1-a-b")
        self.assertRaises(errors.OnlyOneCodeError, b.input_code)
        b.close()
        self.assertRaises(errors.WormholeClosedError, b.set_code, "1-a-b")
        self.assertRaises(errors.OnlyOneCodeError, b.allocate_code, 2)
