"""The pairing model alone, with recording fake connections."""

from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole_relay._limits import Limits
from wormhole_relay._pairing import Pairing

from ...relay._fakes import SIDE1, SIDE2, TOKEN, TOKEN2, FakeConnection, RecordingUsage


class PairingModel(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.events = []
        self.usage = RecordingUsage()
        self.p = Pairing(self.clock, self.usage, Limits())

    def conn(self, name):
        return FakeConnection(name, self.events, self.clock.seconds())

    def test_oldest_other_side_wins(self):
        """With two of one side waiting, a newcomer of the other side pairs
        with the oldest; the other is displaced after the pair is told."""
        a1, a2, b = self.conn("A1"), self.conn("A2"), self.conn("B")
        self.p.add(a1, TOKEN, SIDE1)
        self.p.add(a2, TOKEN, SIDE1)
        self.assertEqual(self.p.stats(), (0, 2, 0))
        self.p.add(b, TOKEN, SIDE2)
        self.assertEqual(self.events, [("A1", "paired", "B"),
                                       ("B", "paired", "A1"),
                                       ("A2", "displaced")])
        self.assertEqual(self.p.stats(), (2, 0, 0))

    def test_sideless_pairs_with_anything(self):
        """No side on either connection: they pair."""
        a, b = self.conn("A"), self.conn("B")
        self.p.add(a, TOKEN, SIDE1)
        self.p.add(b, TOKEN, None)
        self.assertEqual(self.events[:2], [("A", "paired", "B"),
                                           ("B", "paired", "A")])

    def test_remove(self):
        """A removed connection is not paired with later."""
        a, b = self.conn("A"), self.conn("B")
        self.p.add(a, TOKEN, SIDE1)
        self.p.remove(a)
        self.p.add(b, TOKEN, SIDE2)
        self.assertEqual(self.events, [])
        self.assertEqual(self.p.stats(), (0, 1, 0))

    def test_tokens_are_separate(self):
        """Connections of different tokens never meet."""
        a, b = self.conn("A"), self.conn("B")
        self.p.add(a, TOKEN, SIDE1)
        self.p.add(b, TOKEN2, SIDE2)
        self.assertEqual(self.events, [])

    def test_count_only_counts(self):
        """count(n) (bytes a glue moved itself) adds to the pair's bytes
        for stats() and the record, and forwards nothing."""
        a, b = self.conn("A"), self.conn("B")
        self.p.add(a, TOKEN, SIDE1)
        self.p.add(b, TOKEN, SIDE2)
        del self.events[:]
        a.pair.count(3)
        a.pair.count(4)
        self.assertEqual(self.events, [])
        self.assertEqual(self.p.stats(), (2, 0, 7))

    def test_pair_counts_and_forwards(self):
        """The pair hands bytes to the other connection, counts them for
        stats() while alive, and records happy when both are gone."""
        a, b = self.conn("A"), self.conn("B")
        self.p.add(a, TOKEN, SIDE1)
        self.clock.advance(2)
        self.p.add(b, TOKEN, SIDE2)
        pair = a.pair
        pair.moved(a, b"abc")
        pair.moved(b, b"de")
        self.assertIn(("B", "forward", b"abc"), self.events)
        self.assertIn(("A", "forward", b"de"), self.events)
        self.assertEqual(self.p.stats(), (2, 0, 5))
        pair.lost(a)
        self.assertEqual(self.events[-1], ("B", "partner_lost"))
        pair.lost(a)  # twice changes nothing
        self.assertEqual(self.usage.got, [])
        self.clock.advance(1)
        pair.lost(b)
        self.assertEqual(self.usage.got, [dict(
            started=0, total_time=3, waiting_time=2, total_bytes=5,
            mood="happy")])
        self.assertEqual(self.p.stats(), (0, 0, 0))
