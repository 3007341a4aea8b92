"""Bounded waits on a peer (wormhole._inactivity), on a task.Clock."""
from twisted.internet import defer, task
from twisted.trial import unittest

from wormhole._inactivity import PeerTimeout, Watchdog, give_up_after
from wormhole.errors import TransferError


class GiveUpAfter(unittest.TestCase):

    def test_fires_in_time(self):
        """A Deferred that fires in time passes its result through and
        leaves no timer behind."""
        clock = task.Clock()
        d = give_up_after(defer.Deferred(), clock, 5, "the offer")
        clock.advance(4.9)
        d.callback("offer")
        self.assertEqual(self.successResultOf(d), "offer")
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_gives_up(self):
        """Silence for the whole span: PeerTimeout (a TransferError, so
        one readable line) naming what we waited for; a late result is
        dropped without an error."""
        clock = task.Clock()
        inner = defer.Deferred()
        d = give_up_after(inner, clock, 5, "the offer", " (--x)")
        clock.advance(5)
        f = self.failureResultOf(d, PeerTimeout)
        self.assertIsInstance(f.value, TransferError)
        self.assertEqual(str(f.value),
                         "gave up waiting for the offer: nothing came for 5 seconds (--x)")
        inner.callback("too late")  # cancelled: ignored

    def test_none_waits_forever(self):
        """seconds=None: no timer at all."""
        clock = task.Clock()
        d = defer.Deferred()
        self.assertIs(give_up_after(d, clock, None, "x"), d)
        self.assertEqual(clock.getDelayedCalls(), [])


class WatchdogTests(unittest.TestCase):

    def test_kicks_postpone(self):
        """Each kick restarts the silence; expired() runs once, exactly
        ``seconds`` after the last kick."""
        clock = task.Clock()
        fired = []
        w = Watchdog(clock, 10, lambda: fired.append(clock.seconds()))
        for _ in range(5):
            clock.advance(6)
            w.kick()
        clock.advance(9.5)
        self.assertEqual(fired, [])
        clock.advance(0.5)
        self.assertEqual(fired, [40.0])
        clock.advance(100)
        self.assertEqual(fired, [40.0])
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_stop(self):
        """stop() cancels the timer."""
        clock = task.Clock()
        w = Watchdog(clock, 10, lambda: self.fail("expired after stop"))
        w.stop()
        self.assertEqual(clock.getDelayedCalls(), [])
        clock.advance(20)

    def test_none_never_expires(self):
        """seconds=None: no timer; kick and stop still work."""
        clock = task.Clock()
        w = Watchdog(clock, None, lambda: self.fail("expired"))
        w.kick()
        w.stop()
        self.assertEqual(clock.getDelayedCalls(), [])
