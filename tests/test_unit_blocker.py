"""tests/unit_blocker/: what ``./dev test`` puts on PYTHONPATH for
tests.unit refuses network and processes, in trial's workers too, and
leaves trial's coordinating process (``--jobs``) free to start them
(docs/testing.md, "The project's tests"). Runs Python as child processes,
so it is an integration test itself."""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from twisted.trial import unittest

from ._paths import REPO_ROOT

BLOCKER = os.path.join(REPO_ROOT, "tests", "unit_blocker")


def run(args, cwd=None, extra_path=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join((BLOCKER,) + tuple(extra_path))
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


class Refuses(unittest.TestCase):
    def test_network_refused(self):
        """Binding or connecting a TCP socket raises UNIT-BLOCKER."""
        for code in ("socket.socket().bind(('127.0.0.1', 0))",
                     "socket.socket().connect(('127.0.0.1', 1))",
                     "socket.create_connection(('127.0.0.1', 1))"):
            r = run(["-c", "import socket; " + code])
            self.assertNotEqual(r.returncode, 0, code)
            self.assertIn("RuntimeError: UNIT-BLOCKER", r.stderr, code)

    def test_processes_refused(self):
        """subprocess, os.fork and os.posix_spawn raise UNIT-BLOCKER."""
        for code in ("import subprocess; subprocess.run(['true'])",
                     "import os; os.fork()",
                     "import os; os.posix_spawn('/bin/true', ['true'], {})"):
            r = run(["-c", code])
            self.assertNotEqual(r.returncode, 0, code)
            self.assertIn("RuntimeError: UNIT-BLOCKER", r.stderr, code)

    def test_unix_sockets_allowed(self):
        """AF_UNIX sockets (no network) still bind and connect."""
        # a socket's path holds about 107 bytes: under a short temporary
        # directory, never under the checkout (which may be deep)
        top = tempfile.mkdtemp(prefix="wh-")
        self.addCleanup(shutil.rmtree, top, True)
        path = os.path.join(top, "s")
        r = run(["-c", textwrap.dedent(f"""\
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.bind({path!r})
            s.listen(1)
            c = socket.socket(socket.AF_UNIX)
            c.connect({path!r})
            print("ok")
            """)])
        self.assertEqual((r.returncode, r.stdout), (0, "ok\n"), r.stderr)


class UnderTrialJobs(unittest.TestCase):
    def test_workers_blocked_coordinator_free(self):
        """``trial --jobs 1`` starts its worker (the coordinator is not
        blocked), and in the worker a test's bind is refused."""
        top = os.path.abspath(self.mktemp())
        package = os.path.join(top, "blockcheck")
        os.makedirs(package)
        open(os.path.join(package, "__init__.py"), "w").close()
        with open(os.path.join(package, "test_it.py"), "w") as f:
            f.write(textwrap.dedent("""\
                import socket
                from twisted.trial import unittest

                class Blocked(unittest.TestCase):
                    def test_bind(self):
                        e = self.assertRaises(
                            RuntimeError, socket.socket().bind, ("127.0.0.1", 0))
                        self.assertIn("UNIT-BLOCKER", str(e))
                """))
        r = run(["-m", "twisted.trial", "--jobs", "1", "blockcheck"], cwd=top,
                extra_path=(top,))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASSED (successes=1)", r.stdout)
