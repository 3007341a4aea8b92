"""The per-state hot paths of the Dilation machines and of transfer-v2's
receiver (_state_paths): the attributes the per-record path calls are a
function of the state, set first in every transition, and a nested
transition leaves its own row."""

from automat import MethodicalMachine, NoTransition
from automat._core import Automaton
from twisted.trial import unittest

from wormhole._dilation._connection import DilatedConnectionProtocol
from wormhole._dilation._inbound import Inbound
from wormhole._dilation._outbound import Outbound
from wormhole._dilation._state_paths import StatePaths
from wormhole._dilation._subchannel import SubChannel
from wormhole.transfer_v2._receiving import OfferReceiver

# transfer-v2's receiving machine uses the same rows
MACHINES = (DilatedConnectionProtocol, Inbound, Outbound, SubChannel, OfferReceiver)


class Rows(unittest.TestCase):
    def test_every_state_has_a_row(self):
        """Each machine that installs hot paths has a row for each of its
        states, and no row for a state it lacks."""
        for cls in MACHINES:
            states = {s.method.__name__ for s in cls.m._automaton.states()}
            self.assertEqual(set(cls._paths.rows), states, cls.__name__)

    def test_every_transition_installs_first(self):
        """Every transition's first output sets the row of the state it
        enters, so no other output can leave a stale path behind."""
        for cls in MACHINES:
            for _old, _input, new, outputs in cls.m._automaton.allTransitions():
                self.assertEqual(outputs[0].method.__name__, f"paths_of_{new.method.__name__}",
                                 (cls.__name__, _input.method.__name__))

    def test_rows_name_the_same_attributes(self):
        """A row that forgets an attribute another row sets is refused when
        the class is built (it would leave the other state's value)."""
        m = MethodicalMachine()
        self.assertRaises(ValueError, StatePaths, m,
                          {"a": {"_x": lambda s: 1}, "b": {"_y": lambda s: 2}})


class IndexedTransitions(unittest.TestCase):
    def test_same_as_automats_scan(self):
        """Every (state, input) pair finds the transition Automat's own
        scan finds; a pair without one still raises NoTransition."""
        for cls in MACHINES:
            automaton = cls.m._automaton
            pairs = {(s, i) for s, i, _o, _outs in automaton.allTransitions()}
            for state, symbol in pairs:
                self.assertEqual(automaton.outputForInput(state, symbol),
                                 Automaton.outputForInput(automaton, state, symbol))
            missing = [(s, i) for s in automaton.states() for i in automaton.inputAlphabet()
                       if (s, i) not in pairs]
            self.assertTrue(missing, cls.__name__)  # each machine has some
            for state, symbol in missing:
                self.assertRaises(NoTransition, automaton.outputForInput, state, symbol)


class Nested(unittest.TestCase):
    def test_innermost_transition_wins(self):
        """An output that re-enters the machine (here: the first output after
        the row, making a second transition) leaves the inner state's row,
        not the outer one's."""

        class Toy:
            m = MethodicalMachine()

            @m.state(initial=True)
            def idle(self): pass

            @m.state()
            def busy(self): pass

            @m.state()
            def done(self): pass

            @m.input()
            def go(self): pass

            @m.input()
            def finish(self): pass

            @m.output()
            def finish_at_once(self):
                self.finish()

            _paths = StatePaths(m, {"idle": {"_path": lambda s: "idle"},
                                    "busy": {"_path": lambda s: "busy"},
                                    "done": {"_path": lambda s: "done"}})
            _paths.upon(idle, go, busy, [finish_at_once])
            _paths.upon(busy, finish, done, [])

            def __init__(self):
                self._paths.install_initial(self, "idle")

        t = Toy()
        self.assertEqual(t._path, "idle")
        t.go()
        self.assertEqual(t._path, "done")
