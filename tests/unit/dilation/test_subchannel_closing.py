"""The bounded wait of a SubChannel in "closing" (Dilation protocol,
"L5 subchannels": a CLOSE is answered by a CLOSE; docs/security.md,
"Dilation"): a peer that never answers our CLOSE cannot keep the
subchannel for the rest of the session."""

from twisted.internet.task import Clock
from twisted.python import log
from twisted.trial import unittest

from wormhole._dilation._subchannel import CLOSE_TIMEOUT, SubChannel

from .fakes import FakeInbound, FakeOutbound, Recorder


class ClosingTimeout(unittest.TestCase):
    def build(self, **kwargs):
        self.events = []
        self.clock = Clock()
        sc = SubChannel(5, "chat", FakeOutbound(self.events), FakeInbound(self.events),
                        lambda scid: self.events.append(("registry.closed", scid)),
                        lambda f, *a: None, clock=self.clock, **kwargs)
        sc.attach(Recorder(self.events))
        del self.events[:]
        return sc

    def logged(self):
        lines = []
        log.addObserver(lines.append)
        self.addCleanup(log.removeObserver, lines.append)
        return lines

    def test_unanswered_close_forgotten(self):
        """Our CLOSE unanswered: 300 s later (not before) the subchannel is
        forgotten by L4 and the registry as if the peer had answered, its
        protocol gets connectionLost, and one line says why; a CLOSE that
        comes after that is no longer ours to handle, and nothing else is
        left on the clock."""
        self.assertEqual(CLOSE_TIMEOUT, 300.0)
        lines = self.logged()
        sc = self.build()
        sc.loseConnection()
        self.assertEqual(self.events, [("outbound.send_close", 5)])
        self.clock.advance(CLOSE_TIMEOUT - 0.001)
        sc.remote_data(b"still delivered while closing")
        self.assertEqual(self.events[1:], [("p.dataReceived", b"still delivered while closing")])
        del self.events[:]
        self.clock.advance(0.001)
        self.assertEqual(self.events, [
            ("outbound.subchannel_closed",), ("inbound.subchannel_closed", 5),
            ("registry.closed", 5), ("p.connectionLost", "ConnectionDone")])
        self.assertEqual([" ".join(e["message"]) for e in lines], [
            "Dilation: the peer never answered our CLOSE of subchannel 5 within 300 s; "
            "forgetting it (docs/security.md)"])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        del self.events[:]
        sc.remote_close()
        sc.loseConnection()
        self.assertEqual(self.events, [])

    def test_answered_close_cancels_the_wait(self):
        """The peer's CLOSE in time (what the reference and we send at
        once) ends the subchannel as before and leaves no timer; nothing
        happens when the 300 s would have passed."""
        lines = self.logged()
        sc = self.build()
        sc.loseConnection()
        self.clock.advance(1)
        sc.remote_close()
        self.assertEqual(self.events[1:], [
            ("outbound.subchannel_closed",), ("inbound.subchannel_closed", 5),
            ("registry.closed", 5), ("p.connectionLost", "ConnectionDone")])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        del self.events[:]
        self.clock.advance(CLOSE_TIMEOUT)
        self.assertEqual((self.events, lines), ([], []))

    def test_abandon_while_closing_cancels_the_wait(self):
        """The wormhole closing while we wait for the answer ends the
        subchannel at once and cancels the wait."""
        sc = self.build()
        sc.loseConnection()
        sc.abandon()
        self.assertEqual(self.events[1:], [("registry.closed", 5),
                                           ("p.connectionLost", "ConnectionDone")])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_close_timeout_is_injectable(self):
        """``close_timeout`` sets the wait; a second loseConnection() while
        closing starts no second timer."""
        sc = self.build(close_timeout=2.5)
        sc.loseConnection()
        sc.loseConnection()
        self.assertEqual(len(self.clock.getDelayedCalls()), 1)
        self.clock.advance(2.5)
        self.assertIn(("registry.closed", 5), self.events)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_remote_close_while_open_starts_no_wait(self):
        """A CLOSE from the peer while open is answered and ends the
        subchannel at once: there is nothing to wait for."""
        sc = self.build()
        sc.remote_close()
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertIn(("p.connectionLost", "ConnectionDone"), self.events)
