"""Run `twistd -n wormhole-mailbox` as a subprocess for a test."""

import os
import re
import signal
import subprocess
import sys

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks, returnValue
from twisted.internet.task import deferLater

TWISTD = os.path.join(os.path.dirname(sys.executable), "twistd")


@inlineCallbacks
def start_twistd(testcase, workdir, *args):
    """Start our server on 127.0.0.1 and a free port; return (proc, url).
    The process is killed (by its PID) in cleanup, also on failure."""
    os.makedirs(workdir, exist_ok=True)
    logpath = os.path.join(workdir, f"twistd-{len(os.listdir(workdir))}.log")
    log = open(logpath, "wb")
    proc = subprocess.Popen(
        [TWISTD, "-n", "--pidfile=", "wormhole-mailbox",
         "--port=tcp:0:interface=127.0.0.1", *args],
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    log.close()

    def cleanup():
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    testcase.addCleanup(cleanup)
    for _ in range(600):
        with open(logpath, "rb") as f:
            m = re.search(rb"starting on (\d+)", f.read())
        if m:
            returnValue((proc, f"ws://127.0.0.1:{int(m.group(1))}/v1"))
        if proc.poll() is not None:
            break
        yield deferLater(reactor, 0.05, lambda: None)
    with open(logpath, "rb") as f:
        raise AssertionError("twistd did not start:\n" + f.read().decode())


def kill(proc):
    """SIGKILL the process we started, by its PID."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
