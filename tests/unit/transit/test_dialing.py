"""The DialQueue: at most N dials in flight, started a stagger apart,
each cancelled after its timeout (docs/security.md, "Connection attempts")."""

from twisted.internet import defer, task
from twisted.trial import unittest

from wormhole._transit._dialing import DialQueue


class DialQueueTests(unittest.TestCase):
    def setUp(self):
        self.clock = task.Clock()
        self.started = []  # (name, Deferred)

    def dial(self, name, failures=None):
        def start():
            d = defer.Deferred()
            if failures is not None:  # the caller's callbacks come first
                d.addErrback(failures.append)
            self.started.append((name, d))
            return d
        return start

    def names(self):
        return [n for n, _ in self.started]

    def test_stagger(self):
        """Dials start one at a time, ``stagger`` seconds apart."""
        q = DialQueue(self.clock, max_concurrent=10, stagger=0.5)
        for n in "abc":
            q.add(self.dial(n))
        self.assertEqual(self.names(), ["a"])
        self.clock.advance(0.4)
        self.assertEqual(self.names(), ["a"])
        self.clock.advance(0.1)
        self.assertEqual(self.names(), ["a", "b"])
        self.clock.advance(0.5)
        self.assertEqual(self.names(), ["a", "b", "c"])
        self.assertEqual(q.in_flight(), 3)

    def test_bound(self):
        """No more than ``max_concurrent`` in flight; a finished dial (won
        or failed) frees its slot for the next one."""
        q = DialQueue(self.clock, max_concurrent=2, stagger=0.1)
        for n in "abcd":
            q.add(self.dial(n))
        self.clock.pump([0.1] * 10)
        self.assertEqual(self.names(), ["a", "b"])
        self.assertEqual((q.in_flight(), q.queued()), (2, 2))
        self.started[0][1].callback("proto")
        self.assertEqual(self.names(), ["a", "b", "c"])
        self.started[1][1].errback(ConnectionRefusedError())
        self.assertEqual(self.names(), ["a", "b", "c"])  # pacing first
        self.clock.advance(0.1)
        self.assertEqual(self.names(), ["a", "b", "c", "d"])
        self.assertEqual(q.queued(), 0)

    def test_urgent_first(self):
        """An urgent dial (a relay) goes before queued ordinary ones."""
        q = DialQueue(self.clock, max_concurrent=1, stagger=0)
        for n in "ab":
            q.add(self.dial(n))
        q.add(self.dial("relay"), urgent=True)
        self.started[0][1].errback(ConnectionRefusedError())
        self.clock.advance(0)
        self.assertEqual(self.names(), ["a", "relay"])

    def test_timeout_cancels(self):
        """A dial still in flight after ``dial_timeout`` is cancelled and
        its slot goes to the next dial."""
        q = DialQueue(self.clock, max_concurrent=1, stagger=0, dial_timeout=5)
        failures = []
        q.add(self.dial("slow", failures))
        q.add(self.dial("next"))
        self.clock.advance(4.9)
        self.assertEqual(self.names(), ["slow"])
        self.clock.advance(0.1)
        self.assertTrue(failures[0].check(defer.CancelledError))
        self.clock.advance(0)
        self.assertEqual(self.names(), ["slow", "next"])

    def test_fails_at_once(self):
        """A dial whose Deferred has already failed frees its slot at once
        without upsetting the pacing."""
        q = DialQueue(self.clock, max_concurrent=1, stagger=0.2)
        q.add(lambda: defer.fail(ConnectionRefusedError()).addErrback(lambda f: None))
        q.add(self.dial("b"))
        self.assertEqual(q.in_flight(), 0)
        self.clock.advance(0.2)
        self.assertEqual(self.names(), ["b"])

    def test_stop(self):
        """stop() drops the queue, cancels the timers and starts nothing more."""
        q = DialQueue(self.clock, max_concurrent=1, stagger=0.1, dial_timeout=5)
        q.add(self.dial("a"))
        q.add(self.dial("b"))
        q.stop()
        q.add(self.dial("c"))
        self.clock.advance(10)
        self.assertEqual(self.names(), ["a"])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(q.queued(), 0)

    def test_bad_bound(self):
        """A bound below one is refused at construction."""
        self.assertRaises(ValueError, DialQueue, self.clock, max_concurrent=0)


class DialQueueFor(unittest.TestCase):
    def test_longer_through_tor(self):
        """Dials through Tor get TOR_DIAL_TIMEOUT (a circuit comes first),
        others DIAL_TIMEOUT."""
        from wormhole._transit._dialing import DIAL_TIMEOUT, TOR_DIAL_TIMEOUT, dial_queue_for
        clock = task.Clock()
        for tor, timeout in ((None, DIAL_TIMEOUT), (object(), TOR_DIAL_TIMEOUT)):
            q = dial_queue_for(clock, tor)
            cancelled = []
            q.add(lambda c=cancelled: defer.Deferred(c.append))
            clock.advance(timeout - 0.1)
            self.assertEqual(cancelled, [])
            clock.advance(0.1)
            self.assertEqual(len(cancelled), 1)
            q.stop()
        self.assertGreater(TOR_DIAL_TIMEOUT, DIAL_TIMEOUT)
