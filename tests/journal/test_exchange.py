"""Journalled mode in memory (Journalled mode): two copies of
misc/demo-journal.py's application exchange lines through the in-memory
Mailbox server of tests/client/fakes.py, on a Clock, and one, the other or
both are killed at every transaction of the exchange in turn (before the
checkpoint, between checkpoint and release, after release, while
reconnecting) and restarted from their last checkpoint. Whatever the kill
points, each line reaches the other side exactly once and both close happy.

The same with real processes and real servers is test_crash.py; this one
runs every kill point in milliseconds.
"""

import io

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.trial import unittest

from ..client.fakes import FakeServer
from .demo import KillableChatApp, MemoryStore, demo

URL = "ws://127.0.0.1:1/v1"
CODE = "4-purple-sausages"
LINES = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"]}
POSITIONS = ("released", "after", "before", "reconnect")


class Gate:
    """One lifetime's way to the server: closed (and its connections
    dropped) when that lifetime dies, as a killed process's would be."""

    def __init__(self, server):
        self.server = server
        self.open = True
        self.conns = []

    def endpoint_factory(self, scheme, host, port):
        gate = self

        class Endpoint:
            def connect(self, factory):
                if not gate.open:
                    return Deferred()  # a dead process connects nowhere
                d = gate.server.endpoint_factory(scheme, host, port).connect(factory)

                def record(conn):
                    gate.conns.append(conn)
                    return conn
                return d.addCallback(record)
        return Endpoint()

    def close(self):
        self.open = False
        for conn in self.conns:
            conn.transport.loseConnection()


class Side:
    """One application across its lifetimes, with its own kill plan."""

    def __init__(self, test, name, plan):
        self.test = test
        self.name = name
        self.plan = list(plan)
        self.store = MemoryStore()
        self.out = []
        self.done = False
        self.deaths = 0
        self.app = None

    def options(self, gate):
        return dict(stderr=io.StringIO(), _endpoint_factory=gate.endpoint_factory,
                    _reconnect_delay=0.5, _reconnect_max_delay=0.5)

    def start(self):
        self._lifetime(lambda app, gate: app.start_new(URL, CODE, LINES[self.name],
                                                        **self.options(gate)))

    def restart(self):
        if not self.store.exists():  # died before its first checkpoint
            self.start()
            return
        self._lifetime(lambda app, gate: app.resume(**self.options(gate)))

    def _lifetime(self, begin):
        gate = Gate(self.test.server)
        app = KillableChatApp(self.test.clock, self.store, out=self.out.append,
                              on_done=self._done)
        kill = self.plan.pop(0) if self.plan else None

        def died():
            self.deaths += 1
            gate.close()
            # restarted a little later, as a supervisor would
            self.test.clock.callLater(0.2, self.restart)
        app.setup_kill(kill, died)
        self.app = app
        begin(app, gate)

    def _done(self):
        self.done = True

    def final_state(self):
        return self.store.load()["state"]


class ExchangeTests(unittest.TestCase):
    def run_exchange(self, plan_a=(), plan_b=()):
        self.clock = Clock()
        self.server = FakeServer(self.clock)
        a, b = Side(self, "a", plan_a), Side(self, "b", plan_b)
        a.start()
        b.start()
        for _ in range(5000):
            self.server.pump()
            if a.done and b.done:
                break
            self.clock.advance(0.1)
        self.assertTrue(a.done and b.done,
                        f"not finished: a {a.final_state()} b {b.final_state()}")
        for side, peer in ((a, b), (b, a)):
            state = side.final_state()
            # exactly once, in order, whatever the kill points
            self.assertEqual(state["received"], LINES[peer.name] + [demo.BYE], side.name)
            self.assertEqual(state["closed"], "happy")
            self.assertEqual(side.plan, [], "every planned kill happened")
        return a, b

    def test_no_kills(self):
        """The exchange itself: every line once, both close happy."""
        a, b = self.run_exchange()
        self.assertEqual(a.out, ["received: b1", "received: b2", "received: b3",
                                 "closed: happy"])

    def plans(self, offset):
        # every changing transaction in turn (one per lifetime: each
        # restart dies at its first), the positions rotating, plus a death
        # while reconnecting and a lost transaction in between
        plan = []
        for i in range(40):
            position = POSITIONS[(i + offset) % len(POSITIONS)]
            plan.append((position, 0 if position == "reconnect" else 1))
        return plan

    def count_transactions(self):
        """How many changing transactions one side has, unkilled."""
        a, _ = self.run_exchange()
        return a.app.changing

    def kill_one_at_every_step(self, victim):
        steps = self.count_transactions()
        for offset in range(len(POSITIONS)):
            plan = self.plans(offset)[:steps + steps // 2]
            sides = self.run_exchange(**{f"plan_{victim}": plan})
            self.assertEqual(sides["ab".index(victim)].deaths, len(plan))

    def test_kill_a_at_every_step(self):
        """A dies at each of its transactions in turn, in every position."""
        self.kill_one_at_every_step("a")

    def test_kill_b_at_every_step(self):
        """B dies at each of its transactions in turn, in every position."""
        self.kill_one_at_every_step("b")

    def test_kill_both(self):
        """Both die again and again, out of step with each other."""
        steps = self.count_transactions()
        for offset in range(len(POSITIONS)):
            self.run_exchange(plan_a=self.plans(offset)[:steps],
                              plan_b=self.plans(offset + 1)[:steps])

    def test_kill_at_nth(self):
        """A single death at the n-th transaction, for every n and
        position, on either side."""
        steps = self.count_transactions()
        for n in range(1, steps + 1):
            for position in ("released", "after", "before"):
                self.run_exchange(plan_a=[(position, n)])
                self.run_exchange(plan_b=[(position, n)])
