"""Run our ``wormhole`` CLI as a child process of the test's reactor.

``run = CLIProcess.spawn(reactor, argv, stdin=b"...")``; ``run.ended`` fires
with the exit status; ``run.wait_for(regex)`` fires when stdout or stderr
has a match. Every process is killed (by its PID, through its transport)
in cleanup if it is still running.
"""
import os
import re
import sys

from twisted.internet import defer, error, protocol


def our_cli(*args):
    return [sys.executable, "-m", "wormhole.cli"] + list(args)


def our_source(argv):
    """``{"PYTHONPATH": ...}`` for a child running our CLI (``our_cli``):
    the ``src`` this test imported ``wormhole`` from, so that a test run
    from a second checkout (a git worktree) runs that checkout's code,
    not the one the venv was installed from; {} for any other program."""
    if list(argv[:3]) != our_cli()[:3]:
        return {}
    import wormhole
    return {"PYTHONPATH": os.path.dirname(os.path.dirname(wormhole.__file__))}


class CLIProcess(protocol.ProcessProtocol):

    def __init__(self, name):
        self.name = name
        self.stdout = b""
        self.stderr = b""
        self.status = None
        self.ended = defer.Deferred()
        self._waiters = []

    @classmethod
    def spawn(cls, testcase, reactor, argv, stdin=None, name="wormhole", env=None,
              cwd=None):
        """``env`` is added to ours (less any WORMHOLE_RELAY_URL,
        WORMHOLE_TRANSIT_HELPER and what points Python at our venv);
        ``cwd`` is the child's directory."""
        p = cls(name)
        full_env = dict(os.environ)
        # trial's workers (--jobs) get PYTHONPATH = the parent's sys.path:
        # inherited, it made the reference's `wormhole` import ours
        for name in ("WORMHOLE_RELAY_URL", "WORMHOLE_TRANSIT_HELPER", "PYTHONPATH",
                     "PYTHONHOME", "VIRTUAL_ENV"):
            full_env.pop(name, None)
        full_env.update(our_source(argv))
        full_env.update(env or {})
        reactor.spawnProcess(p, argv[0], argv, env=full_env, path=cwd)
        if stdin is not None:
            p.transport.write(stdin)
            p.transport.closeStdin()
        testcase.addCleanup(p.kill)
        return p

    def childDataReceived(self, fd, data):
        if fd == 1:
            self.stdout += data
        else:
            self.stderr += data
        for w in list(self._waiters):
            regex, d = w
            m = re.search(regex, self.stdout + b"\n" + self.stderr)
            if m:
                self._waiters.remove(w)
                d.callback(m)

    def wait_for(self, regex):
        m = re.search(regex, self.stdout + b"\n" + self.stderr)
        if m:
            return defer.succeed(m)
        d = defer.Deferred()
        self._waiters.append((regex, d))
        return d

    def write(self, data):
        self.transport.write(data)

    def processEnded(self, reason):
        self.status = reason.value.exitCode
        for regex, d in self._waiters:
            d.errback(AssertionError(f"{self.name} ended before printing {regex!r}:\n"
                                     + self.describe()))
        self._waiters = []
        self.ended.callback(self.status)

    def kill(self):
        # not ``status``: it stays None for a process ended by a signal
        if not self.ended.called:
            try:
                self.transport.signalProcess("KILL")
            except error.ProcessExitedAlready:
                pass  # it ended; processEnded is on its way
            return self.ended

    def describe(self):
        return (f"--- {self.name} exit={self.status}\nstdout: {self.stdout!r}\n"
                f"stderr: {self.stderr.decode('utf-8', 'replace')}")
