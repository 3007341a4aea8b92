"""Child processes for the interop tests: spawned through the reactor,
output collected, killed by PID (SIGTERM, then SIGKILL after a grace
period) on timeout and in the test's cleanup, also when it fails.
"""
import json
import os
import re

from twisted.internet import defer, error, protocol

# generous: a loaded CI machine (load 10 on 2 cores happens here) makes
# every Python start slow; a hang is still reported, with the output
PROCESS_TIMEOUT = 120.0
# a child that says this on stderr crashed, whatever its exit code
CRASH_SIGNS = (b"Traceback (most recent call last)", b"No module named")
STOP_GRACE = 5.0
POLL_INTERVAL = 0.05


class ProcessFailed(Exception):
    """A subprocess timed out or could not be waited for; carries its output."""


def _clean_env(extra=None):
    """The environment for a child: ours minus anything that could point it
    at the wrong code or the wrong server, plus a UTF-8 locale so that
    non-ASCII text survives argv and stdout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")}
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


class ProcessRun(protocol.ProcessProtocol):
    """One child process: collects stdout/stderr, lets a test wait for a
    line, for the end, and kills it on timeout or in cleanup."""

    def __init__(self, reactor, name, timeout):
        self._reactor = reactor
        self.name = name
        self.stdout = b""
        self.stderr = b""
        self.status = None
        self.timed_out = False
        self._end_waiters = []
        self._line_waiters = []
        self._timeout = reactor.callLater(timeout, self._on_timeout)

    # ProcessProtocol

    def outReceived(self, data):
        self.stdout += data
        self._check_waiters()

    def errReceived(self, data):
        self.stderr += data
        self._check_waiters()

    def cancel_timeout(self):
        if self._timeout.active():
            self._timeout.cancel()

    def processEnded(self, reason):
        self.cancel_timeout()
        self.status = reason.value
        self._check_waiters()
        unmet, self._line_waiters = self._line_waiters, []
        for _, _, d in unmet:
            d.errback(ProcessFailed("%s ended before the expected line\n%s"
                                    % (self.name, self.describe())))
        waiters, self._end_waiters = self._end_waiters, []
        for d in waiters:
            d.callback(self)

    def when_ended(self):
        """A new Deferred that fires with self once the process is gone
        (however it ended)."""
        if self.status is not None:
            return defer.succeed(self)
        d = defer.Deferred()
        self._end_waiters.append(d)
        return d

    # what tests use

    @property
    def exit_code(self):
        return getattr(self.status, "exitCode", None)

    def describe(self):
        return ("--- %s: status %r%s\n--- stdout:\n%s\n--- stderr:\n%s"
                % (self.name, self.status,
                   " (killed after timeout)" if self.timed_out else "",
                   self.stdout.decode("utf-8", "replace"),
                   self.stderr.decode("utf-8", "replace")))

    def ended(self):
        """Fires with self when the process has exited; fails with its
        output if it had to be killed after the timeout."""
        def done(run):
            if run.timed_out:
                raise ProcessFailed("%s timed out\n%s"
                                    % (self.name, self.describe()))
            return run
        return self.when_ended().addCallback(done)

    def wait_for_line(self, pattern, stream="stdout"):
        """Fires with the first match of regex ``pattern`` (bytes) on a
        complete line of ``stream`` ("stdout", "stderr" or "any")."""
        d = defer.Deferred()
        self._line_waiters.append((stream, re.compile(pattern), d))
        self._check_waiters()
        return d

    def events(self):
        """ref_peer.py's JSON-lines output, parsed."""
        return [json.loads(line) for line in self.stdout.splitlines()
                if line.startswith(b"{")]

    def kill(self):
        """SIGTERM, then SIGKILL after a grace period; fires when ended."""
        if self.status is not None:
            return defer.succeed(None)
        self._signal("TERM")
        escalate = self._reactor.callLater(STOP_GRACE, self._signal, "KILL")

        def stop_escalation(result):
            if escalate.active():
                escalate.cancel()
            return result
        return self.when_ended().addBoth(stop_escalation).addBoth(
            lambda _: None)

    # internals

    def _signal(self, name):
        try:
            self.transport.signalProcess(name)
        except error.ProcessExitedAlready:
            pass

    def _on_timeout(self):
        self.timed_out = True
        self.kill()

    def _check_waiters(self):
        streams = {"stdout": [self.stdout], "stderr": [self.stderr],
                   "any": [self.stdout, self.stderr]}
        ready, still = [], []
        for stream, regex, d in self._line_waiters:
            m = None
            for data in streams[stream]:
                for line in data.splitlines(keepends=True):
                    if line.endswith(b"\n"):
                        m = m or regex.search(line)
            if m:
                ready.append((d, m))
            else:
                still.append((stream, regex, d))
        # fire only after updating the list: a callback may add a waiter
        self._line_waiters = still
        for d, m in ready:
            d.callback(m)


def new_dir(testcase):
    path = os.path.abspath(testcase.mktemp())
    os.makedirs(path)
    return path


def spawn(testcase, reactor, argv, name, cwd=None, env=None,
          timeout=PROCESS_TIMEOUT, stdin=None):
    """Start ``argv``; a cleanup on ``testcase`` kills it by PID if it is
    still running when the test ends (also on failure).  ``stdin`` bytes
    are written to the child, then its stdin is closed."""
    run = ProcessRun(reactor, name, timeout)
    try:
        reactor.spawnProcess(run, argv[0], argv, env=env or _clean_env(),
                             path=cwd or new_dir(testcase))
    except BaseException:
        run.cancel_timeout()
        raise
    testcase.addCleanup(run.kill)
    if stdin is not None:
        run.transport.write(stdin)
        run.transport.closeStdin()
    return run


@defer.inlineCallbacks
def wait_all(testcase, runs, expected_exit=0):
    """Wait until every run has ended.  When one ends unexpectedly (an exit
    code other than ``expected_exit``, or a Python crash on stderr),
    the others are killed at once: a peer whose partner died would only
    wait for its timeout.  If any was killed by its timeout, the test
    fails with the output of all of them."""
    def on_end(run):
        if run.exit_code != expected_exit or any(
                sign in run.stderr for sign in CRASH_SIGNS):
            for other in runs:
                if other is not run:
                    other.kill()
        return run
    yield defer.gatherResults([r.when_ended().addCallback(on_end)
                               for r in runs])
    if any(r.timed_out for r in runs):
        testcase.fail("timed out:\n" + "\n".join(r.describe() for r in runs))
    return runs
