"""One Kademlia lookup (P2P-D7.1, 7.2) as a machine: rounds of α queries,
a widening round when a round brings nothing closer, done when all of the
k closest were queried (or a value was found)."""

import attrs
from automat import MethodicalMachine
from twisted.internet import defer

from wormhole._automat_private import trace_hook

from ._contacts import merged


@attrs.frozen
class FoundValue:
    """A FIND_VALUE answer: the value and its holder's metadata."""
    key: bytes
    value: object
    metadata: dict
    holder: object  # the Contact that answered


@attrs.frozen
class LookupResult:
    closest: list          # the k closest contacts that answered, nearest first
    value: FoundValue | None
    rounds: int
    rpcs: int
    queried_without_value: list  # contacts that answered with nodes only
    known: list            # every contact the lookup heard of


class Lookup:
    """`query(contact) → Deferred` fires with ("nodes", [Contact]) or
    ("value", FoundValue); failures drop the contact (P2P-D7.1)."""

    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, target, k, alpha, initial, query, reachable,
                 want_value=False):
        self._target = target
        self._k = k
        self._alpha = alpha
        self._query = query
        self._reachable = reachable
        self._want_value = want_value
        self._shortlist = {}          # address → Contact
        self._queried = set()
        self._answered = set()
        self._failed = set()
        self._values = []
        self._rounds = 0
        self._rpcs = 0
        self._done = defer.Deferred()
        self._merge(initial)

    def run(self):
        """Start; the Deferred fires with a LookupResult."""
        self._start()
        return self._done

    # -- plain helpers --------------------------------------------------------

    def _merge(self, contacts):
        # dedupe by key (P2P-D7.1), the first sighting kept, with the
        # address a later one gives when it had none (a peer met on a new
        # link before its ANNOUNCE, P2P-D6.2), the k-buckets' rule: without
        # it a live node stayed unreachable to the lookup, never queried,
        # and a lookup for that very node missed it
        for c in contacts:
            if c.address in self._failed:
                continue
            known = self._shortlist.get(c.address)
            self._shortlist[c.address] = c if known is None else merged(c, known)

    def _ranked(self):
        return sorted(self._shortlist.values(),
                      key=lambda c: c.address ^ self._target)

    def _best_distance(self):
        ranked = self._ranked()
        return ranked[0].address ^ self._target if ranked else None

    def _pick(self, widen):
        ranked = [c for c in self._ranked() if self._reachable(c)]
        if widen:
            # every un-queried contact of the k closest (paper §2.3)
            return [c for c in ranked[:self._k]
                    if c.address not in self._queried]
        fresh = [c for c in ranked if c.address not in self._queried]
        return fresh[:self._alpha]

    def _all_k_queried(self):
        ranked = [c for c in self._ranked() if self._reachable(c)]
        return all(c.address in self._queried for c in ranked[:self._k])

    def _query_round(self, widen):
        picked = self._pick(widen)
        if not picked:
            return self._finished()
        self._rounds += 1
        before = self._best_distance()
        calls = []
        for contact in picked:
            self._queried.add(contact.address)
            self._rpcs += 1
            d = defer.maybeDeferred(self._query, contact)
            d.addCallbacks(self._answered_by, self._failed_by,
                           callbackArgs=(contact,), errbackArgs=(contact,))
            calls.append(d)
        defer.DeferredList(calls).addCallback(
            lambda _: self._round_done(before))

    def _answered_by(self, answer, contact):
        kind, payload = answer
        self._answered.add(contact.address)
        if kind == "value":
            self._values.append(payload)
        else:
            self._merge(payload)

    def _failed_by(self, failure, contact):
        self._failed.add(contact.address)
        self._shortlist.pop(contact.address, None)

    def _round_outcome(self, before):
        if self._values:
            return self._found()
        if self._all_k_queried():
            return self._finished()
        after = self._best_distance()
        progressed = after is not None and (before is None or after < before)
        if progressed:
            return self._closer()
        return self._no_closer()

    def _result(self):
        answered = [c for c in self._ranked() if c.address in self._answered]
        value = None
        if self._values:
            # several holders: the smallest age wins (P2P-D7.2)
            value = min(self._values, key=lambda v: v.metadata.get("age", 0))
        holders = {v.holder.address for v in self._values}
        without = [c for c in answered if c.address not in holders]
        return LookupResult(answered[:self._k], value, self._rounds,
                            self._rpcs, without, self._ranked())

    # -- the machine --------------------------------------------------------

    @m.state(initial=True)
    def idle(self): pass  # noqa

    @m.state()
    def querying(self): pass  # noqa

    @m.state()
    def widening(self): pass  # noqa

    @m.state()
    def done(self): pass  # noqa

    @m.input()
    def _start(self): pass  # noqa

    @m.input()
    def _round_done(self, before): pass  # noqa

    @m.input()
    def _closer(self): pass  # noqa

    @m.input()
    def _no_closer(self): pass  # noqa

    @m.input()
    def _found(self): pass  # noqa

    @m.input()
    def _finished(self): pass  # noqa

    @m.output()
    def _normal_round(self):
        self._query_round(widen=False)

    @m.output()
    def _wide_round(self):
        self._query_round(widen=True)

    @m.output()
    def _judge_round(self, before):
        self._round_outcome(before)

    @m.output()
    def _deliver(self):
        self._done.callback(self._result())

    idle.upon(_start, enter=querying, outputs=[_normal_round])
    querying.upon(_round_done, enter=querying, outputs=[_judge_round])
    querying.upon(_closer, enter=querying, outputs=[_normal_round])
    querying.upon(_no_closer, enter=widening, outputs=[_wide_round])
    widening.upon(_round_done, enter=widening, outputs=[_judge_round])
    widening.upon(_closer, enter=querying, outputs=[_normal_round])
    widening.upon(_no_closer, enter=widening, outputs=[_wide_round])
    for _s in (querying, widening):
        _s.upon(_found, enter=done, outputs=[_deliver])
        _s.upon(_finished, enter=done, outputs=[_deliver])
    del _s
