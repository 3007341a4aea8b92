"""The interop harness: ``InteropTestCase`` and, re-exported for the
tests, the pieces it is made of (reference.py: where the reference is and
how to call the CLIs; processes.py: child processes; servers.py: mailbox
servers and usage).

Everything listens on 127.0.0.1 only, on kernel-chosen ports, and every
process a test starts is stopped by PID in a cleanup, also on failure.
"""
from twisted.internet import defer, reactor
from twisted.internet.task import deferLater
from twisted.trial import unittest

from .processes import (
    CRASH_SIGNS,
    POLL_INTERVAL,
    PROCESS_TIMEOUT,
    STOP_GRACE,
    ProcessFailed,
    ProcessRun,
    new_dir,
    spawn,
    wait_all,
)
from .reference import (
    CLI_APPID,
    NO_TRANSIT,
    REF_PEER,
    REF_VENV_ENV,
    REPO_ROOT,
    cli_text_stdout,
    our_classic_cli_argv,
    our_cli_argv,
    ref_bin,
    ref_cli_argv,
    ref_peer_argv,
    reference_venv,
)
from .servers import (
    RefMailboxServer,
    TwistdMailboxServer,
    mailbox_moods,
    our_twistd,
    start_our_server,
    start_twistd,
    wait_for_moods,
    wait_until_listening,
)

__all__ = [
    "CLI_APPID", "CRASH_SIGNS", "InteropTestCase", "NO_TRANSIT",
    "POLL_INTERVAL", "PROCESS_TIMEOUT", "ProcessFailed", "ProcessRun",
    "REF_PEER", "REF_VENV_ENV", "REPO_ROOT", "RefMailboxServer",
    "STOP_GRACE", "TwistdMailboxServer", "cli_text_stdout", "mailbox_moods",
    "new_dir", "our_classic_cli_argv", "our_cli_argv", "our_twistd", "ref_bin", "ref_cli_argv",
    "ref_peer_argv", "reference_venv", "spawn", "start_our_server",
    "start_twistd", "wait_all", "wait_for_moods", "wait_until_listening",
]


class InteropTestCase(unittest.TestCase):
    """Base for interop tests: real reactor, real subprocesses, so a
    generous per-test timeout (a hung peer fails the test with its output
    through ProcessRun's own timeout long before this one)."""

    timeout = 300

    def setUp(self):
        # fail (never skip) when the reference is missing
        self.ref_venv = reference_venv()

    def spawn(self, argv, name, **kwargs):
        return spawn(self, reactor, argv, name, **kwargs)

    def start_ref_server(self, extra_args=(), port=0, basedir=None):
        return RefMailboxServer.start(self, reactor, extra_args, port=port,
                                      basedir=basedir)

    def start_our_server(self):
        return start_our_server(self, reactor)

    def start_our_twistd_server(self, extra_args=()):
        """Our server, started exactly like the reference one."""
        return TwistdMailboxServer.start(self, reactor, our_twistd(),
                                         "our mailbox server (twistd)",
                                         extra_args)

    def wait_for_moods(self, server, predicate):
        return wait_for_moods(reactor, server, predicate)

    def assertExited(self, run, code=0):
        """The process ended with exit code ``code``; else fail with its
        whole output."""
        if run.exit_code != code:
            self.fail("expected exit code %r\n%s" % (code, run.describe()))

    def assertOursFellBack(self, *runs_and_argvs):
        """Each run of our CLI (``(run, argv builder)`` pairs; the
        reference's are skipped) met a classic peer: it said, in one line,
        that it uses the classic protocol (docs/transfer-v2.md "The CLI")."""
        from wormhole.cli.ui.wording import CLASSIC_USED
        for run, argv in runs_and_argvs:
            if argv is our_cli_argv:
                self.assertIn(CLASSIC_USED.encode(), run.stderr, run.describe())

    def assertOursNamedNoProtocol(self, *runs_and_argvs):
        """Each run of our CLI (``(run, argv builder)`` pairs) exchanged a
        text: classic's text offer whatever the peer speaks, and no line
        naming a protocol (docs/transfer-v2.md "Text")."""
        from wormhole.cli.ui.wording import CLASSIC_USED, V2_USED
        for run, argv in runs_and_argvs:
            if argv is our_cli_argv:
                for line in (CLASSIC_USED, V2_USED):
                    self.assertNotIn(line.encode(), run.stderr, run.describe())

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
        deadline = reactor.seconds() + timeout
        while not predicate():
            if reactor.seconds() > deadline:
                self.fail("gave up waiting for " + what)
            yield deferLater(reactor, POLL_INTERVAL, lambda: None)

    def start_tap(self, upstream_url):
        """A recording proxy in front of ``upstream_url`` (wiretap.py)."""
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
