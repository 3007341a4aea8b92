"""What the hostile tests share: a victim process of our own library
(``_victim``) and its memory from /proc, and a flooding TCP peer."""

import json
import sys

from twisted.internet import defer, protocol, reactor
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

from .._processes import REPO_ROOT, LineProcess, child_env

MiB = 1024 * 1024


def memory_kb(pid, field="VmHWM"):
    """VmHWM (peak resident memory) or VmRSS of ``pid``, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")


class Victim(LineProcess):
    """Our library in a child process (tests/hostile/_victim.py)."""

    def next_json(self):
        return self.next_line().addCallback(lambda line: json.loads(line))


def start_victim(test, mode, key):
    """Spawn the victim; stopped by its PID when the test ends."""
    v = Victim()
    env = child_env()
    env["PYTHONPATH"] = REPO_ROOT
    reactor.spawnProcess(v, sys.executable,
                         [sys.executable, "-m", "tests.hostile._victim", mode, key.hex()],
                         env=env, path=REPO_ROOT)
    test.addCleanup(v.stop)
    return v


@implementer(IPushProducer)
class Flood(protocol.Protocol):
    """Writes ``prologue`` (which may be a function of the bytes read so
    far, returning None until it is ready), then junk as fast as the
    socket takes it, up to ``limit`` bytes, until the peer hangs up.
    ``lost`` fires with the number of junk bytes written."""

    CHUNK = MiB

    def __init__(self, prologue, limit):
        self._prologue = prologue
        self._limit = limit
        self._received = b""
        self.sent = 0
        self._paused = False
        self._flooding = False
        self.lost = defer.Deferred()

    def connectionMade(self):
        self.transport.registerProducer(self, True)
        self._maybe_start()

    def dataReceived(self, data):
        self._received += data
        self._maybe_start()

    def _maybe_start(self):
        if self._flooding:
            return
        first = self._prologue(self._received)
        if first is not None:
            self._flooding = True
            self.transport.write(first)
            self.resumeProducing()

    def pauseProducing(self):
        self._paused = True

    def resumeProducing(self):
        self._paused = False
        while self._flooding and not self._paused and self.sent < self._limit:
            self.transport.write(b"\xa5" * self.CHUNK)
            self.sent += self.CHUNK

    def stopProducing(self):
        self._flooding = False

    def connectionLost(self, reason):
        self._flooding = False
        self.lost.callback(self.sent)


def flood(port, prologue, limit):
    """Connect a Flood to 127.0.0.1:port; Deferred firing with it."""
    f = Flood(prologue, limit)
    ep = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
    return ep.connect(protocol.Factory.forProtocol(lambda: f))
