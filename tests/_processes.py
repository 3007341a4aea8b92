"""What the interop tests of several packages share: the reference
implementation's executables (a failure, never a skip, when it is
missing; found by _paths.py, re-exported here), a clean environment for
child processes, and a process protocol that collects stdout lines and is
stopped by its PID."""

import os
import signal
import socket

from twisted.internet import defer, protocol

from ._paths import (  # noqa: F401 (re-exported)
    REF_VENV_ENV,
    REPO_ROOT,
    reference_bin,
    reference_package_file,
    reference_source_file,
    reference_venv_dir,
)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (for a child
    process that must be told its port on the command line)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def child_env():
    """Our environment minus what would mix the venvs up."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class LineProcess(protocol.ProcessProtocol):
    """Collects stdout lines; ``next_line()`` waits for the next one;
    ``stop()`` sends SIGTERM to the PID it was spawned with, SIGKILL after
    5 s."""

    def __init__(self):
        self.buf = b""
        self.lines = []
        self.waiting = []
        self.stderr = b""
        self.ended = defer.Deferred()
        self.pid = None

    def connectionMade(self):
        self.pid = self.transport.pid

    def outReceived(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            if self.waiting:
                self.waiting.pop(0).callback(line)
            else:
                self.lines.append(line)

    def errReceived(self, data):
        self.stderr += data

    def next_line(self):
        if self.lines:
            return defer.succeed(self.lines.pop(0))
        d = defer.Deferred()
        self.waiting.append(d)
        return d

    def processEnded(self, reason):
        for d in self.waiting:
            d.errback(AssertionError("process ended; stderr: "
                                     + self.stderr.decode(errors="replace")[-3000:]))
        self.waiting = []
        self.ended.callback(None)

    @defer.inlineCallbacks
    def stop(self):
        if not self.ended.called:
            self._signal(signal.SIGTERM)
            from twisted.internet import reactor
            timer = reactor.callLater(5, self._signal, signal.SIGKILL)
            yield self.ended
            if timer.active():
                timer.cancel()

    def _signal(self, sig):
        if not self.ended.called:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass


@defer.inlineCallbacks
def run_in_loopback_namespace(module, *args):
    """``python -m module ARGS`` (our venv's python, the repository on its
    path) in a new network namespace whose only interface is loopback, so
    the reference, which listens on and advertises every local address,
    reaches 127.0.0.1 only. Returns the JSON object its last stdout line
    holds; a non-zero exit is an AssertionError with its stderr. Needs
    unshare(1), ip(8) and root: a failure, never a skip, without them."""
    import json
    import shutil
    import sys

    from twisted.internet import reactor
    from twisted.internet.utils import getProcessOutputAndValue
    unshare = shutil.which("unshare")
    if not (unshare and shutil.which("ip") and os.geteuid() == 0):
        raise AssertionError("needs unshare(1), ip(8) and root for a loopback-only namespace")
    script = " ".join(["ip link set lo up &&", sys.executable, "-m", module, *args])
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO_ROOT
    out, err, code = yield getProcessOutputAndValue(
        unshare, ["-n", "--", "sh", "-c", script], path=REPO_ROOT, env=env, reactor=reactor)
    if code != 0:
        raise AssertionError(f"{module} exited with {code}: "
                             + err.decode(errors="replace")[-3000:])
    return json.loads(out.decode().strip().splitlines()[-1])
