"""Process harness for the interoperability tests.

The reference implementation (magic-wormhole 0.24, mailbox server 0.8) is a
peer we test against, never a library we import: it lives in its own venv
(``$WORMHOLE_REFERENCE_VENV``, default ``<repo>/.venv-ref``) and is only
ever run as a subprocess from here.  Everything a test starts is stopped by
PID in a cleanup (SIGTERM, then SIGKILL after a grace period), also when the
test fails, and everything listens on 127.0.0.1 only.
"""
import json
import os
import re
import sqlite3
import sys

from twisted.internet import defer, error, protocol
from twisted.internet.task import deferLater
from twisted.trial import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
REF_VENV_ENV = "WORMHOLE_REFERENCE_VENV"
REF_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "ref_peer.py")
# the appid of the file-transfer tool (spec 004, 7.2 Application IDs)
CLI_APPID = "lothar.com/wormhole/text-or-file-xfer"
# a port nothing listens on: the CLIs must never reach the public transit
# relay, and text mode has no business connecting to any relay at all
NO_TRANSIT = "tcp:127.0.0.1:1"

PROCESS_TIMEOUT = 60.0
# a child that says this on stderr crashed, whatever its exit code
CRASH_SIGNS = (b"Traceback (most recent call last)", b"No module named")
STOP_GRACE = 5.0
POLL_INTERVAL = 0.05


class ProcessFailed(Exception):
    """A subprocess timed out or could not be waited for; carries its output."""


def reference_venv():
    """The reference venv's root, or raise AssertionError telling what to do.

    A missing reference is a failure, never a skip: a skipped interop suite
    would hide exactly the regressions it exists to catch.
    """
    venv = os.environ.get(REF_VENV_ENV) or os.path.join(REPO_ROOT,
                                                         ".venv-ref")
    for tool in ("python", "wormhole", "twistd"):
        if not os.access(os.path.join(venv, "bin", tool), os.X_OK):
            raise AssertionError(
                "the reference implementation is not installed in %r "
                "(missing bin/%s): run `./dev test`, which installs it and "
                "sets %s" % (venv, tool, REF_VENV_ENV))
    return venv


def ref_bin(tool):
    return os.path.join(reference_venv(), "bin", tool)


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


def ref_cli_argv(relay_url, *args, transit=NO_TRANSIT):
    """argv for the reference `wormhole` CLI against ``relay_url`` (and the
    Transit relay endpoint ``transit``)."""
    return [ref_bin("wormhole"), "--relay-url", relay_url,
            "--transit-helper", transit] + list(args)


def our_cli_argv(relay_url, *args):
    """argv for our `wormhole` CLI, run by the python running the tests:
    ``python -m wormhole.cli`` when the package has a ``__main__``, else
    the console script installed next to that python."""
    import wormhole  # ours: this runs in our test process
    cli_dir = os.path.join(os.path.dirname(wormhole.__file__), "cli")
    if os.path.exists(os.path.join(cli_dir, "__main__.py")):
        prog = [sys.executable, "-m", "wormhole.cli"]
    else:
        prog = [os.path.join(os.path.dirname(sys.executable), "wormhole")]
    return prog + ["--relay-url", relay_url,
                   "--transit-helper", NO_TRANSIT] + list(args)


def ref_peer_argv(script):
    """argv for tests/interop/ref_peer.py under the reference python."""
    return [ref_bin("python"), REF_PEER, json.dumps(script)]


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


@defer.inlineCallbacks
def wait_until_listening(reactor, port, timeout=30.0):
    """Poll until 127.0.0.1:port accepts a TCP connection."""
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    deadline = reactor.seconds() + timeout
    while True:
        try:
            p = yield connectProtocol(
                TCP4ClientEndpoint(reactor, "127.0.0.1", port, timeout=5),
                protocol.Protocol())
        except error.ConnectError:
            if reactor.seconds() > deadline:
                raise
            yield deferLater(reactor, POLL_INTERVAL, lambda: None)
        else:
            p.transport.loseConnection()
            return


@defer.inlineCallbacks
def start_twistd(testcase, reactor, twistd, plugin, name, basedir, args,
                 probe=True, port=0):
    """``twistd -n PLUGIN --port tcp:PORT:interface=127.0.0.1 ARGS`` in
    ``basedir``; returns (ProcessRun, port) once the port accepts TCP.
    ``port=0`` (the default) lets the kernel pick a free one.

    ``probe=False`` skips the test connection: a Transit relay would count
    it as an "empty" connection in its usage.  twistd logs "starting on
    PORT" only after listen(), so the port is ready either way."""
    argv = [twistd, "-n", "--pidfile=", plugin,
            # port 0: the kernel picks a free port, which twistd's log
            # line "<Factory> starting on PORT" tells us
            "--port", "tcp:%d:interface=127.0.0.1" % port] + list(args)
    run = spawn(testcase, reactor, argv, name, cwd=basedir, timeout=600)
    try:
        m = yield run.wait_for_line(rb"\w+ starting on (\d+)")
    except ProcessFailed as e:
        testcase.fail("%s did not start: %s" % (name, e))
    port = int(m.group(1))
    if probe:
        yield wait_until_listening(reactor, port)
    return run, port


class TwistdMailboxServer:
    """A mailbox server run as ``twistd -n wormhole-mailbox`` on a free
    127.0.0.1 port, with the reference's options: the reference's
    (magic-wormhole-mailbox-server 0.8) or ours, by ``twistd`` path."""

    def __init__(self, run, port, basedir):
        self._run = run
        self.port = port
        self.basedir = basedir
        self.url = "ws://127.0.0.1:%d/v1" % port
        self.usage_db = os.path.join(basedir, "usage.sqlite")

    @classmethod
    @defer.inlineCallbacks
    def start(cls, testcase, reactor, twistd, name, extra_args=(),
              port=0, basedir=None):
        """``port``/``basedir`` of a stopped server restart it with the
        same port and databases."""
        basedir = basedir or new_dir(testcase)
        run, port = yield start_twistd(
            testcase, reactor, twistd, "wormhole-mailbox", name, basedir,
            ["--channel-db", os.path.join(basedir, "channel.sqlite"),
             "--usage-db", os.path.join(basedir, "usage.sqlite")]
            + list(extra_args), port=port)
        return cls(run, port, basedir)

    def usage(self):
        """The usage DB as [{"kind", "result", "app_id"}] (the shape of our
        in-process server's ``usage()``).  Reads the reference's schema
        (tables ``mailboxes`` and ``nameplates``) or ours (one ``usage``
        table with a ``kind`` column): docs/interop.md, "Usage DB"."""
        if not os.path.exists(self.usage_db):
            return []
        conn = sqlite3.connect(self.usage_db)
        try:
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if "usage" in tables:
                return [{"kind": k, "result": r, "app_id": a}
                        for k, a, r in conn.execute(
                            "SELECT kind, app_id, result FROM usage")]
            rows = []
            for table, kind in (("mailboxes", "mailbox"),
                                ("nameplates", "nameplate")):
                if table in tables:
                    rows += [{"kind": kind, "result": r, "app_id": a}
                             for a, r in conn.execute(
                                 "SELECT app_id, result FROM " + table)]
            return rows
        finally:
            conn.close()

    def stop(self):
        return self._run.kill()


class RefMailboxServer(TwistdMailboxServer):
    """The reference mailbox server (magic-wormhole-mailbox-server 0.8)."""

    @classmethod
    def start(cls, testcase, reactor, extra_args=(), port=0, basedir=None):
        return super().start(testcase, reactor, ref_bin("twistd"),
                             "reference mailbox server", extra_args,
                             port=port, basedir=basedir)


def our_twistd():
    """Our venv's twistd (finds our plugin through src/twisted/plugins)."""
    return os.path.join(os.path.dirname(sys.executable), "twistd")


@defer.inlineCallbacks
def start_our_server(testcase, reactor):
    """Our mailbox server, in-process, on a free 127.0.0.1 port."""
    try:
        from wormhole.server.testing import start_mailbox_server
    except ImportError as e:
        testcase.fail("our mailbox server is not available "
                      "(wormhole.server.testing.start_mailbox_server): %s"
                      % (e,))
    srv = yield start_mailbox_server(reactor, port=0)
    testcase.addCleanup(srv.stop)
    return srv


@defer.inlineCallbacks
def wait_for_moods(reactor, server, predicate, timeout=30.0):
    """Poll ``server.usage()`` until ``predicate(rows)`` holds.  A server
    writes a mailbox's usage row when its last side closes, which may land
    a moment after the clients' processes exit."""
    deadline = reactor.seconds() + timeout
    while True:
        rows = list(server.usage())
        if predicate(rows):
            return rows
        if reactor.seconds() > deadline:
            return rows
        yield deferLater(reactor, POLL_INTERVAL, lambda: None)


def mailbox_moods(rows):
    return sorted(r["result"] for r in rows if r["kind"] == "mailbox")


def cli_text_stdout(text):
    """What `wormhole receive` prints on stdout for a received text.

    Settled against the reference 0.24 (docs/interop.md, "Received text on
    the terminal"): each non-printable character (str.isprintable() false,
    e.g. newline, tab, ESC, U+2028) and the backslash itself is written as
    its Python escape, so a peer cannot drive the receiver's terminal; the
    text is followed by one newline.
    """
    return ("".join(repr(c)[1:-1] for c in text) + "\n").encode("utf-8")


class InteropTestCase(unittest.TestCase):
    """Base for interop tests: real reactor, real subprocesses, so a
    generous per-test timeout (a hung peer fails the test with its output
    through ProcessRun's own timeout long before this one)."""

    timeout = 180

    def setUp(self):
        # fail (never skip) when the reference is missing
        self.ref_venv = reference_venv()

    def spawn(self, argv, name, **kwargs):
        from twisted.internet import reactor
        return spawn(self, reactor, argv, name, **kwargs)

    def start_ref_server(self, extra_args=(), port=0, basedir=None):
        from twisted.internet import reactor
        return RefMailboxServer.start(self, reactor, extra_args, port=port,
                                      basedir=basedir)

    def start_our_server(self):
        from twisted.internet import reactor
        return start_our_server(self, reactor)

    def start_our_twistd_server(self, extra_args=()):
        """Our server, started exactly like the reference one."""
        from twisted.internet import reactor
        return TwistdMailboxServer.start(self, reactor, our_twistd(),
                                         "our mailbox server (twistd)",
                                         extra_args)

    def wait_for_moods(self, server, predicate):
        from twisted.internet import reactor
        return wait_for_moods(reactor, server, predicate)

    def assertExited(self, run, code=0):
        """The process ended with exit code ``code``; else fail with its
        whole output."""
        if run.exit_code != code:
            self.fail("expected exit code %r\n%s" % (code, run.describe()))

    @defer.inlineCallbacks
    def exchange_text(self, relay_url, sender_argv, receiver_argv, text,
                      code="4-purple-sausages"):
        """One `wormhole send --text` / `wormhole receive` pair over
        ``relay_url``; returns (sender_run, receiver_run) once both ended.
        ``*_argv`` are ref_cli_argv or our_cli_argv."""
        send = self.spawn(sender_argv(relay_url, "send", "--text", text,
                                      "--code", code), "sender")
        recv = self.spawn(receiver_argv(relay_url, "receive", code),
                          "receiver")
        yield wait_all(self, [send, recv])
        return send, recv

    def wait_all(self, runs, expected_exit=0):
        return wait_all(self, runs, expected_exit)

    @defer.inlineCallbacks
    def poll_until(self, predicate, what, timeout=30.0):
        """Poll ``predicate()`` until true; fail naming ``what`` if it is
        still false after ``timeout`` seconds."""
        from twisted.internet import reactor
        deadline = reactor.seconds() + timeout
        while not predicate():
            if reactor.seconds() > deadline:
                self.fail("gave up waiting for " + what)
            yield deferLater(reactor, POLL_INTERVAL, lambda: None)

    def start_tap(self, upstream_url):
        """A recording proxy in front of ``upstream_url`` (wiretap.py)."""
        from twisted.internet import reactor

        from .wiretap import WireTap
        tap = WireTap.start(reactor, upstream_url)
        self.addCleanup(tap.stop)
        return tap

    @defer.inlineCallbacks
    def send_allocated_text(self, relay_url, sender_argv, receiver_argv,
                            text, *send_args):
        """`wormhole send --text` with a server-allocated code (read from
        the sender's "wormhole receive CODE" line), then `wormhole receive
        CODE`; returns (sender_run, receiver_run, code)."""
        send = self.spawn(sender_argv(relay_url, "send", "--text", text,
                                      *send_args), "sender")
        m = yield send.wait_for_line(rb"wormhole receive (\S+)",
                                     stream="any")
        code = m.group(1).decode("ascii")
        recv = self.spawn(receiver_argv(relay_url, "receive", code),
                          "receiver")
        yield wait_all(self, [send, recv])
        return send, recv, code
