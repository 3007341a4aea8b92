"""What the cases of tests/cli/test_documented_*.py are made of: a
``Case`` (a scenario and what to check), the check of one row of
docs/cli.md against the processes a scenario ran, and the pieces the
scenarios share (our Mailbox server and Transit relay on 127.0.0.1, our
``wormhole`` as child processes, a gate holding a transfer at a chosen
byte). Support only: never a test module."""
import itertools
import os
import re
import sys
from dataclasses import dataclass, field

from twisted.internet import defer, protocol, reactor
from twisted.internet.task import deferLater

from wormhole_relay.testing import start_transit_relay

from .._processes import free_port as closed_port  # noqa: F401 (free a moment ago: closed)
from ..files._support import write_file
from ._doctables import documented_status, pattern, quoted
from ._gate import start_gate
from ._process import CLIProcess, our_cli
from ._servers import OurServer

ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
SHORTENED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shortened_cli.py")
PROMPT = rb"ok\? \(Y/n\): "
# what a transfer-v2 side given it waits for a silent or unreachable
# peer (--peer-timeout), and the sender's shortened classic timers
PEER_TIMEOUT = "3"
SHORT_TIMER = "2"
BIG = 16 * 1000 * 1000
_codes = itertools.count(10)


@dataclass
class Case:
    """``scenario(t)`` runs our CLI (``t`` is the TestCase) and fires with
    {name: CLIProcess}, every process ended. ``expect``: {name: [what it
    must print]}, each an index into the row's backticked messages (or a
    regex, for a row that describes its message instead of quoting it);
    ``status``: {name: exit status} where it is not the row's (``exit N``
    in its message cell, else 1); ``unchecked``: {index: why} for the
    row's backticked parts no run produces."""
    scenario: object
    expect: dict
    status: dict = field(default_factory=dict)
    unchecked: dict = field(default_factory=dict)


def code():
    return f"{next(_codes)}-doc-table"


def output(run):
    return (run.stdout + b"\n" + run.stderr).decode("utf-8", "replace")


@defer.inlineCallbacks
def check_row(t, cell, case):
    """Run ``case`` and check what ``cell`` (a row's message or meaning)
    documents against it."""
    messages = quoted(cell)
    covered = {i for wanted in case.expect.values() for i in wanted if isinstance(i, int)}
    t.assertEqual(set(range(len(messages))) - covered - set(case.unchecked), set(),
                  f"backticked parts of {cell!r} that no run checks")
    runs = yield case.scenario(t)
    for name, wanted in case.expect.items():
        run = runs[name]
        said = output(run)
        t.assertNotIn("Traceback", said, run.describe())
        for w in wanted:
            regex = pattern(messages[w]) if isinstance(w, int) else w
            t.assertIsNotNone(re.search(regex, said), f"{name} did not print {regex!r}:\n"
                                                      + run.describe())
        want = case.status.get(name, documented_status(cell))
        t.assertEqual(run.status, want, run.describe())


class Servers(OurServer):
    """Our Mailbox server (``self.url``) and Transit relay
    (``self.relay_port``) for each test."""

    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        yield OurServer.setUp(self)
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        self.relay_port = relay.port

    def folder(self, *files, size=100):
        """A new folder holding ``files`` of ``size`` bytes each."""
        path = os.path.abspath(self.mktemp())
        os.makedirs(path)
        for name in files:
            write_file(os.path.join(path, name), size)
        return path

    def cli(self, name, *args, cwd=None, stdin=None, helper=None, url=None, shorten=(),
            env=None):
        """Our ``wormhole ARGS`` against our servers (``helper``: another
        --transit-helper; ``shorten``: options of _shortened_cli.py)."""
        helper = f"tcp:127.0.0.1:{self.relay_port}" if helper is None else helper
        argv = ["--relay-url", url or self.url, "--transit-helper", helper, *args]
        if shorten:
            argv = [sys.executable, SHORTENED, *shorten, "--", *argv]
        else:
            argv = our_cli(*argv)
        return CLIProcess.spawn(self, reactor, argv, name=name, env={**ENV, **(env or {})},
                                cwd=cwd, stdin=stdin)

    def send(self, c, *args, **kw):
        return self.cli("sender", "send", "--no-qr", "--hide-progress", "--code", c, *args,
                        **kw)

    def receive(self, c, *args, **kw):
        return self.cli("receiver", "receive", "--hide-progress", *args, c, **kw)

    @defer.inlineCallbacks
    def ended(self, **runs):
        yield defer.gatherResults([r.ended for r in runs.values()])
        return runs

    @defer.inlineCallbacks
    def gated(self, limit, send_args=(), recv_args=("--accept-file",), size=BIG,
              send_shorten=(), recv_shorten=()):
        """A sender and a receiver of a ``size`` file, relay only, through
        a gate that stops forwarding what one connection sends after
        ``limit`` bytes; fires once it did (``self.gate``). Returns
        (sender, receiver)."""
        gate, port = yield start_gate(self, reactor, self.relay_port, limit)
        self.gate = gate
        src, self.out = self.folder("big.bin", size=size), self.folder()
        c = code()
        helper = f"tcp:127.0.0.1:{port}"
        send = self.send(c, "--no-listen", *send_args, "big.bin", cwd=src, helper=helper,
                         shorten=send_shorten)
        recv = self.receive(c, "--no-listen", *recv_args, cwd=self.out, helper=helper,
                            shorten=recv_shorten)
        yield gate.reached
        return send, recv


class Silent(protocol.Protocol):
    """Accepts a connection and never answers: a relay that "answers" a
    TCP probe yet never pairs anyone."""


@defer.inlineCallbacks
def silent_relay(t):
    """A 127.0.0.1 port that accepts TCP connections and says nothing;
    what it accepted is closed in cleanup."""
    accepted = []

    class Factory(protocol.Factory):
        def buildProtocol(self, addr):
            p = Silent()
            accepted.append(p)
            return p
    port = yield reactor.listenTCP(0, Factory(), interface="127.0.0.1")

    def close():
        for p in accepted:
            p.transport.abortConnection()
        return port.stopListening()
    t.addCleanup(close)
    return port.getHost().port


def settle():
    """A turn of the reactor for connections closed by a test to be read."""
    return deferLater(reactor, 0.05, lambda: None)
