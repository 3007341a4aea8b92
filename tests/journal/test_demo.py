"""misc/demo-journal.py as its users run it (Journalled mode): two
processes exchange lines through our Mailbox server on 127.0.0.1; one is
killed with SIGKILL from outside in the middle of the exchange and started
again with the same state file; both finish, each line received once."""

import json
import os
import sys

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater
from twisted.trial import unittest

from ..interop.processes import new_dir, spawn
from ..interop.servers import start_our_server
from .demo import DEMO_PATH

CODE = "21-demo-journal"
LINES = {"a": ["hello", "how are you?", "see you"], "b": ["hi", "fine", "bye-bye"]}


class DemoTests(unittest.TestCase):
    timeout = 300

    def start(self, name, url, state):
        argv = [sys.executable, DEMO_PATH, state, "--code", CODE, "--relay-url", url]
        return spawn(self, reactor, argv + LINES[name], f"demo {name}")

    @defer.inlineCallbacks
    def wait_for_state(self, path, predicate, timeout=60.0):
        """Poll the checkpoint file until ``predicate(data)`` holds."""
        deadline = reactor.seconds() + timeout
        while True:
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    data = json.load(f)  # replaced atomically: never half
                if predicate(data):
                    return data
            if reactor.seconds() > deadline:
                self.fail(f"{path} never reached the awaited state")
            yield deferLater(reactor, 0.1, lambda: None)

    @defer.inlineCallbacks
    def test_kill_and_restart(self):
        """A starts alone; once its first message (its pake) is on the
        server it is killed while waiting for B; B starts, A is restarted
        from its state file only: the exchange completes, each line
        received once, both close happy."""
        srv = yield start_our_server(self, reactor)
        states = {name: os.path.join(new_dir(self), "state.json") for name in "ab"}
        a = self.start("a", srv.url, states["a"])

        def pake_on_server(data):
            mailbox = data["wormhole"]["machines"]["mailbox"]
            return mailbox["state"] == "S2A" and mailbox["pending"] == []
        yield self.wait_for_state(states["a"], pake_on_server)
        a.transport.signalProcess("KILL")
        yield a.when_ended()
        self.assertEqual(getattr(a.status, "signal", None), 9)
        b = self.start("b", srv.url, states["b"])
        # only the state file: the code and lines are in the checkpoint
        a2 = spawn(self, reactor, [sys.executable, DEMO_PATH, states["a"]], "demo a, again")
        yield defer.gatherResults([a2.ended(), b.ended()])
        for run in (a2, b):
            self.assertEqual(run.exit_code, 0, run.describe())
            self.assertIn(b"closed: happy", run.stdout)
        for name, peer in (("a", "b"), ("b", "a")):
            with open(states[name], encoding="utf-8") as f:
                state = json.load(f)["state"]
            self.assertEqual(state["received"], LINES[peer] + ["bye"])
            self.assertEqual(state["closed"], "happy")

    def test_new_exchange_needs_code(self):
        """Without a state file, the demo asks for --code and lines."""
        run = spawn(self, reactor, [sys.executable, DEMO_PATH,
                                    os.path.join(new_dir(self), "none.json")], "demo")

        def check(_):
            self.assertEqual(run.exit_code, 2)
            self.assertIn(b"needs --code", run.stderr)
        return run.ended().addCallback(check)
