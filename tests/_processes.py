"""What the interop tests of several packages share: the reference
implementation's executables (a failure, never a skip, when it is
missing), a clean environment for child processes, and a process
protocol that collects stdout lines and is stopped by its PID."""

import os
import signal
import socket

from twisted.internet import defer, protocol

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


REF_VENV_ENV = "WORMHOLE_REFERENCE_VENV"


def reference_bin(tool):
    """``<reference venv>/bin/<tool>`` ($WORMHOLE_REFERENCE_VENV, default
    ``<repo>/.venv-ref``)."""
    venv = os.environ.get(REF_VENV_ENV) or os.path.join(REPO_ROOT, ".venv-ref")
    path = os.path.join(venv, "bin", tool)
    if not os.access(path, os.X_OK):
        # a failure, never a skip: a skipped interop test hides regressions
        raise AssertionError(
            f"the reference implementation is not installed ({path} missing): "
            f"run `./dev test`, which installs it and sets {REF_VENV_ENV}")
    return path


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


def reference_venv_dir():
    """The reference venv's root ($WORMHOLE_REFERENCE_VENV or .venv-ref)."""
    return os.environ.get(REF_VENV_ENV) or os.path.join(REPO_ROOT, ".venv-ref")


def reference_package_file(package, *parts):
    """A file of an installed reference package (e.g. its db-schemas), read
    where the reference keeps it, never copied into this project."""
    import glob
    found = glob.glob(os.path.join(reference_venv_dir(), "lib", "python*",
                                   "site-packages", package, *parts))
    if not found:
        raise AssertionError(
            f"{package}/{'/'.join(parts)} not found in the reference venv: "
            "run `./dev test`, which installs it")
    return found[0]


def reference_source_file(dist, *parts):
    """A file of a reference server's source distribution (its misc/munin
    plugins), which `./dev` unpacks into <reference venv>/src/."""
    import glob
    found = glob.glob(os.path.join(reference_venv_dir(), "src", dist + "-*",
                                   *parts))
    if not found:
        raise AssertionError(
            f"{dist} {'/'.join(parts)} not found in the reference venv's "
            "src/: run `./dev test`, which unpacks the reference's sdists")
    return found[0]


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
