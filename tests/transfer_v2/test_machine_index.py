"""The constant-time transition lookup and bound inputs (wormhole._automat_private)
give exactly Automat's own answers: on transfer-v2's offer machines for
every (state, input) pair, and on a small machine driven through its
inputs with a tracer attached."""
from automat import MethodicalMachine
from automat._core import Automaton, NoTransition
from twisted.trial import unittest

from wormhole import _automat_private
from wormhole._automat_private import trace_hook
from wormhole.transfer_v2._receiving import OfferReceiver
from wormhole.transfer_v2._sending import OfferSender


def scan(automaton, state, symbol):
    """Automat's own lookup (the linear scan), bypassing the index."""
    return Automaton.outputForInput(automaton, state, symbol)


class Door:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self):
        self.said = []
        _automat_private.bind_inputs(self, ("push", "lock"))

    @m.state(initial=True)
    def closed(self): pass  # noqa

    @m.state()
    def open(self): pass  # noqa

    @m.state()
    def locked(self): pass  # noqa

    @m.input()
    def push(self, how): pass  # noqa

    @m.input()
    def lock(self): pass  # noqa

    @m.output()
    def _creak(self, how):
        self.said.append(f"creak {how}")

    @m.output()
    def _click(self):
        self.said.append("click")

    closed.upon(push, enter=open, outputs=[_creak])
    open.upon(push, enter=closed, outputs=[_creak, _click])
    closed.upon(lock, enter=locked, outputs=[_click])


class Index(unittest.TestCase):
    def test_offer_machines_answer_as_automat(self):
        """Every (state, input) pair of both offer machines gets the scan's
        answer, a NoTransition where the scan has none."""
        for machine in (OfferReceiver.m, OfferSender.m):
            automaton = machine._automaton
            self.assertNotEqual(automaton.outputForInput, None)
            pairs = 0
            for state in automaton.states():
                for symbol in automaton.inputAlphabet():
                    try:
                        expected = scan(automaton, state, symbol)
                    except NoTransition:
                        self.assertRaises(NoTransition, automaton.outputForInput, state, symbol)
                        continue
                    self.assertEqual(automaton.outputForInput(state, symbol), expected)
                    pairs += 1
            # the offer machines have dozens of transitions: the check saw them
            self.assertGreater(pairs, 40)

    def test_indexed_and_bound_machine_behaves_the_same(self):
        """With the index and bound inputs, inputs move the machine, outputs
        get their arguments, the tracer sees each transition, and an input
        without a transition raises NoTransition."""
        _automat_private.index_transitions(Door.m)
        door = Door()
        seen = []
        door.set_trace(lambda old, symbol, new: seen.append((old, symbol, new)))
        door.push("slowly")
        door.push("fast")
        door.lock()
        self.assertEqual(door.said, ["creak slowly", "creak fast", "click", "click"])
        self.assertEqual(seen, [("closed", "push", "open"), ("open", "push", "closed"),
                                ("closed", "lock", "locked")])
        self.assertRaises(NoTransition, door.push, "again")
        # a second door has a state of its own
        other = Door()
        other.push("once")
        self.assertEqual(other.said, ["creak once"])
