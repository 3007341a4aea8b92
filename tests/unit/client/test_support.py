"""Unit tests for the small helpers: observers, eventual queue, journal,
timing."""

import io
import json

from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces
from wormhole._eventual import EventualQueue
from wormhole._observer import OneShotObserver, SequenceObserver
from wormhole.journal import ImmediateJournal, Journal
from wormhole.timing import DebugTiming


class ObserverTests(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.eq = EventualQueue(self.clock)

    def test_one_shot(self):
        """Each when_fired() gets its own Deferred, before or after the
        event, and it fires in a later turn."""
        o = OneShotObserver(self.eq)
        d1 = o.when_fired()
        o.fire("x")
        self.assertNoResult(d1)
        self.clock.advance(0)
        self.assertEqual(self.successResultOf(d1), "x")
        d2 = o.when_fired()
        self.clock.advance(0)
        self.assertEqual(self.successResultOf(d2), "x")
        o.fire_if_not_fired("y")  # already fired: no change
        d3 = o.when_fired()
        self.clock.advance(0)
        self.assertEqual(self.successResultOf(d3), "x")

    def test_sequence(self):
        """Events are queued or handed out in order; an error ends it."""
        o = SequenceObserver(self.eq)
        d1 = o.when_next_event()
        o.fire(1)
        o.fire(2)
        d2 = o.when_next_event()
        self.clock.advance(0)
        self.assertEqual((self.successResultOf(d1), self.successResultOf(d2)), (1, 2))
        d3 = o.when_next_event()
        o.fire(Failure(ValueError("boom")))
        d4 = o.when_next_event()
        self.clock.advance(0)
        self.failureResultOf(d3, ValueError)
        self.failureResultOf(d4, ValueError)

    def test_eventual_order(self):
        """The eventual queue runs calls in order, in one later turn."""
        seen = []
        self.eq.eventually(seen.append, 1)
        self.eq.eventually(seen.append, 2)
        self.assertEqual(seen, [])
        self.clock.advance(0)
        self.assertEqual(seen, [1, 2])
        self.assertEqual(self.clock.getDelayedCalls(), [])


class JournalTests(unittest.TestCase):
    def test_journal(self):
        """Outbound calls wait until the checkpoint is saved."""
        order = []
        j = Journal(lambda: order.append("checkpoint"))
        verifyObject(_interfaces.IJournal, j)
        with j.process():
            j.queue_outbound(order.append, "send")
            order.append("processing")
        self.assertEqual(order, ["processing", "checkpoint", "send"])
        self.assertRaises(RuntimeError, j.queue_outbound, order.append, "x")

    def test_immediate(self):
        """ImmediateJournal sends at once."""
        order = []
        j = ImmediateJournal()
        verifyObject(_interfaces.IJournal, j)
        with j.process():
            j.queue_outbound(order.append, "send")
            order.append("after")
        self.assertEqual(order, ["send", "after"])


class TimingTests(unittest.TestCase):
    def test_write(self):
        """Events with details and finish times are written as JSON."""
        t = DebugTiming()
        t.add("ws_receive", when=1.0, message={"server_tx": 0.5}).finish(when=2.0)
        with t.add("pake1", when=3.0, waiting="crypto") as ev:
            ev.detail(extra=1)
        fn = self.mktemp()
        err = io.StringIO()
        t.write(fn, err)
        with open(fn) as f:
            data = json.load(f)
        self.assertEqual(data[0], {"name": "ws_receive", "start": 1.0, "stop": 2.0,
                                   "details": {"message": {"server_tx": 0.5}}})
        self.assertEqual(data[1]["details"], {"waiting": "crypto", "extra": 1})
        self.assertIn(fn, err.getvalue())
