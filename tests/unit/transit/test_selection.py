"""The selection machine on a Clock (Transit protocol: "Handshake", first
past negotiation wins; "Relay", the relay delay; "API", the connect()
timeout)."""

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._transit._interfaces import ISelection, ITransitConnection
from wormhole._transit._selection import Selection, TransitError

from ...transit.fakes import FakeAttempts


@implementer(ITransitConnection)
class FakeConnection:
    def __init__(self, name, events):
        self.name = name
        self.events = events

    def __repr__(self):
        return self.name

    def select(self, sink):
        self.events.append((f"{self.name}.select", sink))

    def reject(self):
        self.events.append((f"{self.name}.reject",))

    def stop(self):
        self.events.append((f"{self.name}.stop",))

    def connection_made(self):
        pass

    def data_received(self, data):
        pass

    def connection_lost(self):
        pass

    def send_record(self, record):
        pass

    def send_records(self, records):
        pass

    def close(self):
        pass


class SelectionTests(unittest.TestCase):
    def build(self, timeout=30.0):
        self.events = []
        self.clock = Clock()
        self.attempts = FakeAttempts(self.events)
        s = Selection(self.clock, timeout)
        s.wire(self.attempts)
        verifyObject(ISelection, s)
        return s

    def test_direct_now_relay_later(self):
        """Direct attempts start at once, relays after the delay (on a
        Clock: no real time passes)."""
        s = self.build()
        s.start(2.0)
        self.assertEqual(self.events, [("attempts.launch_direct",)])
        self.clock.advance(1.9)
        self.assertEqual(len(self.events), 1)
        self.clock.advance(0.1)
        self.assertEqual(self.events[1:], [("attempts.launch_relay",)])

    def test_no_delay(self):
        """With delay 0 (no direct hints) relays start on the next turn."""
        s = self.build()
        s.start(0.0)
        self.clock.advance(0)
        self.assertEqual(self.events, [("attempts.launch_direct",), ("attempts.launch_relay",)])

    def test_first_wins_losers_rejected(self):
        """The first ready connection is selected and delivered; the others
        are stopped; a later ready one is rejected; timers are cancelled."""
        s = self.build()
        d = s.when_connected()
        s.start(2.0)
        a, b = FakeConnection("a", self.events), FakeConnection("b", self.events)
        s.connection_ready(a)
        self.assertEqual(self.events[1:], [
            ("attempts.make_pipe", a), ("a.select", ("pipe", a)),
            ("attempts.stop_all_except", a)])
        self.assertEqual(self.successResultOf(d), ("pipe", a))
        s.connection_ready(b)
        self.assertEqual(self.events[-1], ("b.reject",))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_win_before_relay_cancels_relay(self):
        """A direct win before the relay delay means no relay attempt."""
        s = self.build()
        s.start(2.0)
        s.connection_ready(FakeConnection("a", self.events))
        self.clock.advance(10)
        self.assertNotIn(("attempts.launch_relay",), self.events)

    def test_timeout(self):
        """Nothing ready within the timeout: every attempt is stopped and
        connect() fails with TransitError."""
        s = self.build(timeout=30.0)
        d = s.when_connected()
        s.start(2.0)
        self.clock.advance(29.9)
        self.assertNoResult(d)
        self.clock.advance(0.1)
        f = self.failureResultOf(d, TransitError)
        self.assertIn("30.0 seconds", str(f.value))
        self.assertEqual(self.events[-1], ("attempts.stop_all_except", None))
        self.assertEqual(self.clock.getDelayedCalls(), [])
        late = FakeConnection("late", self.events)
        s.connection_ready(late)
        self.assertEqual(self.events[-1], ("late.reject",))

    def test_all_failed(self):
        """When the attempts report nothing is left, fail at once."""
        s = self.build()
        d = s.when_connected()
        s.start(0.0)
        s.all_failed("->tcp:127.0.0.1:1: refused")
        f = self.failureResultOf(d, TransitError)
        self.assertIn("refused", str(f.value))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_failures_are_counted_by_attempts(self):
        """A connection failing during negotiation is passed to the
        attempts (which decide whether anything is left)."""
        s = self.build()
        s.start(0.0)
        a = FakeConnection("a", self.events)
        s.connection_failed(a)
        self.assertEqual(self.events[-1], ("attempts.connection_failed", a))

    def test_cancel(self):
        """Cancelling connect()'s Deferred stops everything."""
        s = self.build()
        d = s.when_connected()
        s.start(2.0)
        d.cancel()
        self.failureResultOf(d, defer.CancelledError)
        self.assertEqual(self.events[-1], ("attempts.stop_all_except", None))
        self.assertEqual(self.clock.getDelayedCalls(), [])
