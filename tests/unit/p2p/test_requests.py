"""Our requests awaiting an answer (P2P-D5.2, 6.7): p2pmesh._requests, with
a Clock and no link."""

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh._config import FIND_NODE, FIND_VALUE, PING, STORE
from p2pmesh._requests import ConnectionGone, PendingRequests, RequestFailed, RequestTimeout


class Requests(SynchronousTestCase):
    def setUp(self):
        self.clock = Clock()
        self.timeouts = []
        self.pending = PendingRequests(self.clock, 10, lambda: self.timeouts.append(True))

    def test_answers_go_to_the_oldest_first(self):
        """An ACK fires the oldest request's Deferred; a NACK fails the next
        with RequestFailed carrying the NACK list."""
        first, second = self.pending.add(PING), self.pending.add(STORE)
        self.pending.answer(True, [PING])
        self.assertEqual(self.successResultOf(first), [PING])
        self.assertNoResult(second)
        self.pending.answer(False, [STORE, "full"])
        self.assertEqual(self.failureResultOf(second, RequestFailed).value.args,
                         ([STORE, "full"],))
        self.assertFalse(self.pending)

    def test_find_value_may_be_answered_with_nodes(self):
        """The oldest request decides what matches; FIND_VALUE accepts a
        FIND_NODE answer, nothing else does."""
        self.pending.add(FIND_VALUE)
        self.assertTrue(self.pending.matches(FIND_VALUE))
        self.assertTrue(self.pending.matches(FIND_NODE))
        self.assertFalse(self.pending.matches(PING))
        self.pending.answer(True, [FIND_NODE])
        self.pending.add(FIND_NODE)
        self.assertFalse(self.pending.matches(FIND_VALUE))

    def test_the_oldest_times_out_from_its_own_start(self):
        """One timer watches the oldest: an answer re-arms it for the next
        request's own deadline; expiry fails that one with RequestTimeout,
        and timed_out is told once."""
        first = self.pending.add(PING)
        self.clock.advance(6)
        second = self.pending.add(STORE)
        self.pending.answer(True, [PING])
        self.successResultOf(first)
        self.clock.advance(9.9)
        self.assertEqual(self.timeouts, [])
        self.clock.advance(0.1)
        self.assertEqual(self.failureResultOf(second, RequestTimeout).value.args, (STORE,))
        self.assertEqual(self.timeouts, [True])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_fail_all_when_the_link_is_gone(self):
        """Every waiting request fails with ConnectionGone and no timer is
        left."""
        ds = [self.pending.add(PING), self.pending.add(STORE)]
        self.pending.fail_all()
        for d in ds:
            self.failureResultOf(d, ConnectionGone)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(self.timeouts, [])
