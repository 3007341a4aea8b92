"""What the hostile tests share: a victim process of our own library
(``_library_victim``) and its memory from /proc, and a flooding TCP peer."""

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
    """Our library in a child process (tests/hostile/_library_victim.py)."""

    def next_json(self):
        return self.next_line().addCallback(lambda line: json.loads(line))


def start_victim(test, mode, key):
    """Spawn the victim; stopped by its PID when the test ends."""
    v = Victim()
    env = child_env()
    env["PYTHONPATH"] = REPO_ROOT
    reactor.spawnProcess(v, sys.executable,
                         [sys.executable, "-m", "tests.hostile._library_victim", mode, key.hex()],
                         env=env, path=REPO_ROOT)
    test.addCleanup(v.stop)
    return v


@implementer(IPushProducer)
class Junk:
    """Writes junk to ``transport`` as fast as it takes it, up to
    ``limit`` bytes, until stopped; ``sent`` counts it."""

    CHUNK = MiB

    def __init__(self, transport, limit):
        self._transport = transport
        self._limit = limit
        self._paused = False
        self._running = True
        self.sent = 0
        transport.registerProducer(self, True)
        self.resumeProducing()

    def pauseProducing(self):
        self._paused = True

    def resumeProducing(self):
        self._paused = False
        while self._running and not self._paused and self.sent < self._limit:
            self._transport.write(b"\xa5" * self.CHUNK)
            self.sent += self.CHUNK

    def stopProducing(self):
        self._running = False


class Flood(protocol.Protocol):
    """Writes ``prologue`` (a function of the bytes read so far, returning
    None until it is ready), then Junk up to ``limit`` bytes, until the
    peer hangs up. ``lost`` fires with the number of junk bytes written."""

    def __init__(self, prologue, limit):
        self._prologue = prologue
        self._limit = limit
        self._received = b""
        self._junk = None
        self.lost = defer.Deferred()

    def connectionMade(self):
        self._maybe_start()

    def dataReceived(self, data):
        self._received += data
        self._maybe_start()

    def _maybe_start(self):
        if self._junk is not None:
            return
        first = self._prologue(self._received)
        if first is not None:
            self.transport.write(first)
            self._junk = Junk(self.transport, self._limit)

    def connectionLost(self, reason):
        sent = 0
        if self._junk is not None:
            self._junk.stopProducing()
            sent = self._junk.sent
        self.lost.callback(sent)


def flood(port, prologue, limit):
    """Connect a Flood to 127.0.0.1:port; Deferred firing with it."""
    f = Flood(prologue, limit)
    ep = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
    return ep.connect(protocol.Factory.forProtocol(lambda: f))
