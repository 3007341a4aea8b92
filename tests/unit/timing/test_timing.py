"""wormhole.timing.DebugTiming: what --dump-timing records and writes
(``timing`` in Client API, "Wormhole Parameters")."""
import io
import json

from twisted.internet import defer
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._interfaces import ITiming
from wormhole.timing import DebugTiming
from wormhole.wormhole import create


class FakeClock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


class Recording(unittest.TestCase):

    def setUp(self):
        self.clock = FakeClock()
        self.t = DebugTiming(clock=self.clock)

    def test_provides_itiming(self):
        """DebugTiming is what create(timing=) is typed as."""
        verifyObject(ITiming, self.t)

    def test_add_uses_the_clock_or_when(self):
        """add() stamps the injected clock, or the given ``when``; the event
        keeps its name and details, with no stop until finished."""
        self.t.add("a", x=1)
        self.t.add("b", when=42.0)
        self.assertEqual(self.t.events(), [
            {"name": "a", "start": 100.0, "stop": None, "details": {"x": 1}},
            {"name": "b", "start": 42.0, "stop": None, "details": {}}])

    def test_finish_and_detail(self):
        """finish() stamps the stop (clock or ``when``) and merges details;
        detail() adds details and returns the event for chaining."""
        ev = self.t.add("a").detail(y=2)
        self.clock.now = 101.5
        ev.finish(z=3)
        ev2 = self.t.add("b")
        ev2.finish(when=200.0)
        self.assertEqual(self.t.events()[0],
                         {"name": "a", "start": 100.0, "stop": 101.5,
                          "details": {"y": 2, "z": 3}})
        self.assertEqual(self.t.events()[1]["stop"], 200.0)

    def test_context_manager(self):
        """``with timing.add(...)`` times the block; an exception is noted
        in the details and still propagates."""
        with self.t.add("ok"):
            self.clock.now = 100.25
        with self.assertRaises(ZeroDivisionError):
            with self.t.add("bad"):
                self.clock.now = 100.5
                raise ZeroDivisionError("division by zero")
        ok, bad = self.t.events()
        self.assertEqual((ok["start"], ok["stop"]), (100.0, 100.25))
        self.assertEqual(bad["stop"], 100.5)
        self.assertIn("division by zero", bad["details"]["exception"])

    def test_write(self):
        """write() saves the JSON list of events and says where on stderr."""
        self.t.add("a", role="sender")
        fn = self.mktemp()
        err = io.StringIO()
        self.t.write(fn, err)
        with open(fn) as f:
            self.assertEqual(json.load(f), self.t.events())
        self.assertEqual(err.getvalue(), f"Timing data written to {fn}\n")


class _NeverConnects:
    def __init__(self):
        self.attempts = []

    def connect(self, factory):
        d = defer.Deferred()
        self.attempts.append(d)
        return d


class CreateRecordsSide(unittest.TestCase):

    def test_create_records_side_and_appid(self):
        """create() records a ``wormhole`` event with this client's side
        (the one it binds with) and the appid, before anything else: the
        bundle says who wrote it and when the connect phase began."""
        t = DebugTiming()
        ep = _NeverConnects()
        w = create("appid-x", "ws://127.0.0.1:1/v1", MemoryReactorClock(), timing=t,
                   _endpoint_factory=lambda scheme, host, port: ep)
        first = t.events()[0]
        self.assertEqual(first["name"], "wormhole")
        self.assertEqual(first["details"]["appid"], "appid-x")
        self.assertEqual(first["details"]["side"], w._boss._side)
        self.assertRegex(first["details"]["side"], r"^[0-9a-f]{10}$")
        self.assertEqual(len(ep.attempts), 1)
        ep.attempts[0].cancel()
