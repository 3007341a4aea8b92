"""The Lookup machine (P2P-D7.1, 7.2) against a recording fake network:
α queries per round, widening after a round that brings nothing closer,
failures dropped, a value stops the lookup."""

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh._contacts import Contact
from p2pmesh._lookup import FoundValue, Lookup


def contact(address):
    return Contact(b"%d" % address, address, "10.0.0.1", 1)


class FakeNetwork:
    """Each address knows a fixed list of others; answers are held until
    the test releases them, and every query is recorded."""

    def __init__(self, knows, dead=(), values=None):
        self.knows = knows
        self.dead = set(dead)
        self.values = values or {}
        self.queries = []
        self.pending = []

    def query(self, c):
        self.queries.append(c.address)
        d = defer.Deferred()
        self.pending.append((c, d))
        return d

    def release(self):
        """Answer every outstanding query (one round)."""
        pending, self.pending = self.pending, []
        for c, d in pending:
            if c.address in self.dead:
                d.errback(ConnectionError("dead"))
            elif c.address in self.values:
                d.callback(("value", FoundValue(b"k", self.values[c.address],
                                                {"age": c.address}, c)))
            else:
                d.callback(("nodes", [contact(a)
                                      for a in self.knows.get(c.address, [])]))
        return len(pending)


def start(net, target, initial, k=3, alpha=2, want_value=False):
    lookup = Lookup(target, k, alpha, [contact(a) for a in initial],
                    net.query, lambda c: True, want_value)
    results = []
    lookup.run().addCallback(results.append)
    return results


class LookupMachine(SynchronousTestCase):

    def test_first_round_queries_alpha_closest(self):
        """Round 1 asks the α closest of the initial shortlist."""
        net = FakeNetwork({})
        start(net, 0, [8, 1, 4, 2], alpha=2)
        self.assertEqual(net.queries, [1, 2])

    def test_converges_on_true_closest(self):
        """Answers that bring closer nodes lead to them; the result is the
        k closest that answered, nearest first."""
        net = FakeNetwork({16: [8, 9], 8: [4, 5], 9: [4], 4: [1, 2],
                           5: [1], 1: [2], 2: [1]})
        results = start(net, 0, [16, 17], k=3, alpha=2)
        while net.release():
            pass
        (result,) = results
        self.assertEqual([c.address for c in result.closest], [1, 2, 4])
        self.assertEqual(result.rpcs, len(set(net.queries)))
        self.assertEqual(len(net.queries), len(set(net.queries)))

    def test_widens_after_no_progress(self):
        """A round with nothing closer is followed by one to every
        un-queried contact of the k closest."""
        net = FakeNetwork({})
        start(net, 0, [1, 2, 3, 4, 5], k=4, alpha=2)
        self.assertEqual(net.queries, [1, 2])
        net.release()            # nothing new: widen to 3 and 4 at once
        self.assertEqual(net.queries, [1, 2, 3, 4])

    def test_failures_dropped(self):
        """A contact that fails is not in the result and is not asked
        again when another node names it."""
        net = FakeNetwork({2: [1]}, dead=[1])
        results = start(net, 0, [1, 2, 3], k=3, alpha=3)
        while net.release():
            pass
        self.assertEqual([c.address for c in results[0].closest], [2, 3])
        self.assertEqual(net.queries.count(1), 1)

    def test_value_stops_and_smallest_age_wins(self):
        """The first round with a value ends the lookup; of two values the
        smaller age wins; the closest asked without it is reported."""
        net = FakeNetwork({}, values={3: "old", 2: "new"})
        results = start(net, 0, [1, 2, 3], k=3, alpha=3, want_value=True)
        net.release()
        (result,) = results
        self.assertEqual(result.value.value, "new")
        self.assertEqual([c.address for c in result.queried_without_value],
                         [1])
        self.assertEqual(result.rounds, 1)

    def test_empty_shortlist_finishes(self):
        """Nobody to ask: an empty result at once."""
        net = FakeNetwork({})
        results = start(net, 0, [])
        self.assertEqual(results[0].closest, [])
        self.assertEqual(results[0].rounds, 0)

    def test_a_sighting_with_an_address_replaces_one_without(self):
        """One peer names the target without an address (it met it on an
        inbound link), a later one with its address: the target is asked
        and is the nearest result. Keeping the first sighting left a live
        target unreachable, never queried (a churn test found it)."""
        queried, result = lookup_by_address(
            {8: [UNLISTED_0, contact(4)], 4: [contact(0)], 0: []})
        self.assertIn(0, queried)
        self.assertEqual([c.address for c in result.closest], [0, 4, 8])

    def test_a_sighting_without_an_address_keeps_the_known_one(self):
        """The reverse order: a later sighting without an address leaves
        the known address in the shortlist."""
        queried, result = lookup_by_address(
            {8: [contact(4), contact(0)], 4: [UNLISTED_0], 0: []})
        self.assertIn(0, queried)
        self.assertEqual([c.address for c in result.closest], [0, 4, 8])


UNLISTED_0 = Contact(b"0", 0, None, None)


def lookup_by_address(answers):
    """A lookup of address 0 from contact 8, one query per round, where
    only contacts with an address are reachable; `answers` maps each
    address to the contacts it names. (queried addresses, result)."""
    queried = []

    def query(c):
        queried.append(c.address)
        return defer.succeed(("nodes", answers[c.address]))
    results = []
    Lookup(0, 3, 1, [contact(8)], query, lambda c: c.listening
           ).run().addCallback(results.append)
    (result,) = results
    return queried, result
