"""Run a benchmark inside a network namespace that has only loopback.

The reference implementation advertises every local address as a direct
hint; in a namespace with only ``lo`` both implementations
see the same single address. Needs root, unshare(1) and ip(8).
"""
import os
import shlex
import shutil
import subprocess
import sys


def reexec_in_namespace(script, marker):
    """Re-run ``script`` with this process's arguments under ``unshare -n``
    (loopback up), unless the environment variable ``marker`` says we are
    already inside; exits with the child's status."""
    if os.environ.get(marker) == "1":
        return
    name = os.path.basename(script)
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not (unshare and ip and os.geteuid() == 0):
        sys.exit(f"{name}: needs root, unshare(1) and ip(8) for a loopback-only namespace")
    env = dict(os.environ, **{marker: "1"})
    cmd = "ip link set lo up && exec " + shlex.join(
        [sys.executable, os.path.abspath(script)] + sys.argv[1:])
    sys.exit(subprocess.call([unshare, "-n", "--", "sh", "-c", cmd], env=env))


class Cleanups:
    """What tests/nat's Internet.build and tests/lan's Lan.build register
    (they expect a test case); ``run()`` calls it all, last first. An
    AssertionError from a check among them (Lan.check_sealed) is printed
    and the rest still run."""

    def __init__(self):
        self.calls = []

    def addCleanup(self, f, *a):  # noqa: N802 (trial's name)
        self.calls.append((f, a))

    def run(self):
        for f, a in reversed(self.calls):
            try:
                f(*a)
            except AssertionError as e:
                print(f"cleanup: {e}", file=sys.stderr)


    def finish(self, procs, workdir):
        """Kill ``procs``, run the cleanups, remove ``workdir``."""
        for p in procs:
            p.kill()
            p.wait()
        self.run()
        shutil.rmtree(workdir, ignore_errors=True)


def twistd():
    return os.path.join(os.path.dirname(sys.executable), "twistd")


def start_server(net, where, plugin, port, interface, workdir, procs, env=None):
    """``twistd -n PLUGIN`` on ``interface:port`` in namespace ``where``
    of ``net``; returns once it says it is listening (30 s at most)."""
    import time
    log = open(os.path.join(workdir, plugin + ".log"), "wb")
    p = subprocess.Popen(net.argv(where, [
        twistd(), "-n", "--pidfile=", "--logfile=-", plugin,
        f"--port=tcp:{port}:interface={interface}"]), stdout=log, stderr=log, cwd=workdir,
        env=env)
    procs.append(p)
    deadline = time.monotonic() + 30
    while b"starting on %d" % port not in open(log.name, "rb").read():
        if time.monotonic() > deadline or p.poll() is not None:
            raise SystemExit(f"{plugin} did not start (see {log.name})")
        time.sleep(0.1)
