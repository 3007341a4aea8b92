"""Our ``wormhole receive`` as the victim of a hostile peer: a child
process whose exit status, stdout and stderr bytes, files created, peak
resident memory (``VmHWM`` from ``/proc/self/status``, read by the
process itself as it exits) and time of death the tests assert.

``Victim.spawn(testcase, url, code, *args)`` runs it in a fresh folder
(``victim.out``, inside ``victim.base`` so anything made beside the target
shows too) with our Transit on 127.0.0.1 only and no relay;
``command="send"`` or ``"share"`` runs that command instead (``args``
then name what it offers), with stdin left open; ``"receive-json"`` and
``"share-json"`` (and ``"send-json"``) run them with ``--json``.
"""
import os
import re
import sys

from twisted.internet import reactor

from ..cli._process import CLIProcess

# runs the CLI, and at exit writes the process's peak RSS (KiB) to a file
_MEASURED_CLI = """
import atexit, os, sys
def _peak():
    with open('/proc/self/status') as f:
        kib = next(line.split()[1] for line in f if line.startswith('VmHWM:'))
    with open(os.environ['HOSTILE_PEAK_RSS_FILE'], 'w') as f:
        f.write(kib)
atexit.register(_peak)
from wormhole.cli.cli import main
main()
"""
ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
       "PYTHONUNBUFFERED": "1"}
# what a receiving CLI needs, measured while refusing these archives: ~58 MiB
# (Python, Twisted, autobahn, the zipfile module); the attacks this suite
# replays drove it to gigabytes before the limits of docs/security.md
RSS_BOUND_KIB = 120 * 1024
# bytes a terminal must never get from a peer: C0 controls but the
# newline that ends our own lines, DEL, and C1 controls / bidi overrides
# in their UTF-8 form
_RAW_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]"
                          rb"|\xe2\x81[\xa6-\xa9]")


_COMMANDS = {
    "receive": lambda timeout, args, code: ["receive", "--accept-file", "--hide-progress",
                                            *timeout, *args, code],
    "send": lambda timeout, args, code: ["send", "--hide-progress", *timeout, "--code", code,
                                         *args],
    "share": lambda timeout, args, code: ["share", "--accept-file", "--hide-progress",
                                          *timeout, "--code", code, *args],
    # the same commands in JSON-lines mode: the library's Transfer and Share
    # behind them (docs/cli.md "JSON lines")
    "send-json": lambda timeout, args, code: ["send", "--json", *timeout, "--code", code,
                                              *args],
    "receive-json": lambda timeout, args, code: ["receive", "--json", "--accept-file",
                                                 *timeout, *args, code],
    "share-json": lambda timeout, args, code: ["share", "--json", "--accept-file", *timeout,
                                               "--code", code, *args],
}


class Victim:

    @classmethod
    def spawn(cls, testcase, url, code, *args, peer_timeout=None, env=None,
              command="receive", again=None):
        """``again``: an earlier Victim whose folders this one uses (a
        second session, after what the first one left)."""
        self = cls()
        if again is None:
            self.base = os.path.abspath(testcase.mktemp())
            self.out = os.path.join(self.base, "inbox")
            os.makedirs(self.out)
        else:
            self.base, self.out = again.base, again.out
        self._rss_file = os.path.join(self.base, "peak-rss")
        env = dict(ENV, HOSTILE_PEAK_RSS_FILE=self._rss_file, **(env or {}))
        timeout = () if peer_timeout is None else ("--peer-timeout", str(peer_timeout))
        argv = [sys.executable, "-c", _MEASURED_CLI, "--relay-url", url,
                "--transit-helper", "", *_COMMANDS[command](timeout, args, code)]
        self.run = CLIProcess.spawn(testcase, reactor, argv, name="victim receiver",
                                    env=env, cwd=self.out)
        self.ended_at = None
        self.run.ended.addCallback(self._ended)
        return self

    def _ended(self, status):
        self.ended_at = reactor.seconds()
        return status

    @property
    def ended(self):
        return self.run.ended

    @property
    def status(self):
        return self.run.status

    @property
    def stderr(self):
        return self.run.stderr

    @property
    def stdout(self):
        return self.run.stdout

    def peak_rss_kib(self):
        with open(self._rss_file) as f:
            return int(f.read())

    def created(self):
        """Everything in ``base`` (the target's parent's parent), relative."""
        found = []
        for folder, dirs, files in os.walk(self.base):
            for name in dirs + files:
                path = os.path.join(folder, name)
                if path != self._rss_file:
                    found.append(os.path.relpath(path, self.base))
        return sorted(found)

    def describe(self):
        return self.run.describe()


def assert_clean_terminal(testcase, victim):
    """No raw control character from the peer on stdout or stderr, and
    no traceback."""
    for name, data in (("stdout", victim.stdout), ("stderr", victim.stderr)):
        testcase.assertIsNone(_RAW_CONTROL.search(data), f"{name}: {data!r}")
    testcase.assertNotIn(b"Traceback", victim.stderr, victim.describe())


def assert_one_error_line(testcase, victim, words, status=1):
    """Exit ``status`` (1: a failure) and exactly one line ``ERROR: ...``
    containing ``words``."""
    testcase.assertEqual(victim.status, status, victim.describe())
    errors = [line for line in victim.stderr.split(b"\n") if line.startswith(b"ERROR")]
    testcase.assertEqual(len(errors), 1, victim.describe())
    testcase.assertIn(words.encode("utf-8"), errors[0], victim.describe())
    assert_clean_terminal(testcase, victim)
    return errors[0]


def assert_memory_bounded(testcase, victim):
    if os.environ.get("HOSTILE_SHOW_RSS"):
        print(f"\n{testcase.id()}: peak RSS {victim.peak_rss_kib()} KiB")
    testcase.assertLess(victim.peak_rss_kib(), RSS_BOUND_KIB, victim.describe())
