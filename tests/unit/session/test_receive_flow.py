"""The ``ReceiveFlow`` machine of ``wormhole receive``'s transfer-v2
session (session/_receive_flow.py), on a Clock with a recording session: when
the wait for the next offer is bounded, what ends it, and what it answers
afterwards."""
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole._inactivity import PeerTimeout
from wormhole.session import ReceiveFlow

TIMEOUT = 30


class RecordingSession:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


class Flow(unittest.TestCase):

    def setUp(self):
        self.clock = Clock()
        self.session = RecordingSession()
        self.flow = ReceiveFlow(self.clock, TIMEOUT)

    def test_silence_closes_the_session_once(self):
        """No offer for TIMEOUT seconds: the session is closed once, and
        the error stays the answer after the session is over."""
        self.flow.expect_offers(self.session)
        self.clock.advance(TIMEOUT - 1)
        self.assertEqual((self.session.closed, self.flow.silence_error()), (0, None))
        self.clock.advance(1)
        self.assertEqual(self.session.closed, 1)
        self.flow.session_over()
        error = self.flow.silence_error()
        self.assertIsInstance(error, PeerTimeout)
        self.assertIn("the sender's next offer", str(error))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_offers_under_way_hold_the_watchdog(self):
        """Two offers overlap: the wait is bounded again only when the
        last of them is over, from that moment."""
        self.flow.expect_offers(self.session)
        one, two = object(), object()
        self.flow.offer_came(one)
        self.flow.offer_came(two)
        self.clock.advance(10 * TIMEOUT)
        self.flow.offer_over(one)
        self.clock.advance(10 * TIMEOUT)
        self.assertEqual(self.session.closed, 0)
        self.flow.offer_over(two)
        self.clock.advance(TIMEOUT - 1)
        self.assertEqual(self.session.closed, 0)
        self.clock.advance(1)
        self.assertEqual(self.session.closed, 1)

    def test_expect_while_an_offer_is_under_way(self):
        """An offer that came before ``expect_offers`` (while the session
        started) holds the watchdog off until it is over."""
        offer = object()
        self.flow.offer_came(offer)
        self.flow.expect_offers(self.session)
        self.clock.advance(10 * TIMEOUT)
        self.assertEqual(self.session.closed, 0)
        self.flow.offer_over(offer)
        self.clock.advance(TIMEOUT)
        self.assertEqual(self.session.closed, 1)

    def test_session_over_stops_the_watchdog(self):
        """The sender closed in time: nothing is left on the clock, no
        error is answered, and an offer over afterwards starts nothing."""
        self.flow.expect_offers(self.session)
        offer = object()
        self.flow.offer_came(offer)
        self.flow.session_over()
        self.flow.offer_over(offer)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertIsNone(self.flow.silence_error())
        self.assertEqual(self.session.closed, 0)

    def test_share_never_gives_up(self):
        """``wormhole share`` never expects offers: no bound on the wait."""
        offer = object()
        self.flow.offer_came(offer)
        self.flow.offer_over(offer)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.flow.session_over()
        self.assertIsNone(self.flow.silence_error())
