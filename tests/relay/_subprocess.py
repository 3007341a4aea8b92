"""Run a ``twistd transitrelay`` (ours or the reference's) as a subprocess
on 127.0.0.1 for a test, and stop it (by the PID we started) at cleanup."""

import os
import sys

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks, returnValue
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.error import ConnectError
from twisted.internet.protocol import Factory, ProcessProtocol, Protocol
from twisted.internet.task import deferLater

from .._processes import free_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def our_twistd():
    return os.path.join(os.path.dirname(sys.executable), "twistd")


def reference_venv():
    return os.environ.get("WORMHOLE_REFERENCE_VENV",
                          os.path.join(REPO, ".venv-ref"))


def reference_twistd():
    return os.path.join(reference_venv(), "bin", "twistd")


class TwistdProcess(ProcessProtocol):
    def __init__(self):
        self.output = {1: b"", 2: b"", 3: b""}
        self.ended = Deferred()
        self.running = True

    def childDataReceived(self, fd, data):
        self.output[fd] = self.output.get(fd, b"") + data

    def processEnded(self, reason):
        self.running = False
        # twistd ends a SIGTERM shutdown by re-raising the signal, so a
        # clean stop is "killed by TERM" (Twisted's _exitSignal)
        self.ended.callback((reason.value.exitCode, reason.value.signal))

    def log_lines(self):
        """The JSON lines written to --log-fd 3."""
        return [line for line in self.output[3].decode().splitlines() if line]

    @inlineCallbacks
    def stop(self):
        if self.running:
            self.transport.signalProcess("TERM")
            killer = reactor.callLater(20, self._kill)
            code = yield self.ended
            if killer.active():
                killer.cancel()
            returnValue(code)
        returnValue((yield self.ended) if not self.ended.called
                    else None)

    def _kill(self):
        if self.running:
            self.transport.signalProcess("KILL")


@inlineCallbacks
def wait_listening(port, proc, tries=300):
    """Until something accepts on 127.0.0.1:port (the process is up)."""
    for _ in range(tries):
        if not proc.running:
            raise AssertionError("twistd exited: "
                                 + proc.output[1].decode(errors="replace")
                                 + proc.output[2].decode(errors="replace"))
        ep = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
        try:
            p = yield ep.connect(Factory.forProtocol(Protocol))
        except ConnectError:
            yield deferLater(reactor, 0.05, lambda: None)
            continue
        p.transport.abortConnection()
        yield deferLater(reactor, 0, lambda: None)
        return
    raise AssertionError(f"nothing listens on port {port}")


@inlineCallbacks
def start_twistd(testcase, twistd, args, cwd=None, log_fd=False):
    """Start ``twistd -n transitrelay ARGS`` and wait until its ``--port``
    listens. Returns (TwistdProcess, port)."""
    port = free_port()
    proc = TwistdProcess()
    argv = [twistd, "-n", "--pidfile=", "transitrelay",
            "--port", f"tcp:{port}:interface=127.0.0.1"] + list(args)
    fds = {0: "w", 1: "r", 2: "r"}
    if log_fd:
        fds[3] = "r"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if cwd is None:
        cwd = testcase.mktemp()
        os.makedirs(cwd)
    reactor.spawnProcess(proc, twistd, argv, env=env, path=cwd,
                         childFDs=fds)
    testcase.addCleanup(proc.stop)
    yield wait_listening(port, proc)
    returnValue((proc, port))
