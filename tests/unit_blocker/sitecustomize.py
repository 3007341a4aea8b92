"""The unit tests' rule, enforced: no network, no process.

``./dev test`` runs ``tests.unit`` with this folder on ``PYTHONPATH``, so
Python imports this module at start-up (the ``site`` hook), before any test.
From then on binding or connecting a socket (except an AF_UNIX one),
starting a process (``subprocess``, ``os.fork``, ``posix_spawn``, and so
Twisted's ``spawnProcess``) raises ``RuntimeError("UNIT-BLOCKER ...")``:
a unit test that needs either fails at once, saying why. Such a test
belongs in an integration folder (docs/testing.md, "The project's tests").

``trial --jobs N`` starts its workers with ``spawnProcess``, so the
coordinating process (the one given ``-j``/``--jobs``; it runs no test)
is left alone; its workers inherit ``PYTHONPATH`` and are blocked.
"""

import os
import socket
import subprocess
import sys


def _distributing(argv):
    """Whether this is trial's coordinating process (``-j N``, ``-jN``,
    ``--jobs N``, ``--jobs=N``), which spawns the workers."""
    return any(a == "--jobs" or a.startswith("--jobs=")
               or (a.startswith("-j") and not a.startswith("--"))
               for a in argv[1:])


def _refuse(what):
    def refused(*args, **kwargs):
        raise RuntimeError(f"UNIT-BLOCKER: {what} in a unit test "
                           "(it belongs in an integration folder)")
    return refused


def _local_only(original, what):
    refused = _refuse(what)

    def guarded(self, address, *args):
        if self.family == socket.AF_UNIX:
            return original(self, address, *args)
        return refused()
    return guarded


def install():
    socket.socket.bind = _local_only(socket.socket.bind, "socket bind")
    socket.socket.connect = _local_only(socket.socket.connect, "socket connect")
    socket.socket.connect_ex = _local_only(socket.socket.connect_ex,
                                           "socket connect")
    subprocess.Popen.__init__ = _refuse("a subprocess")
    os.fork = _refuse("os.fork")
    for name in ("posix_spawn", "posix_spawnp", "forkpty"):
        if hasattr(os, name):
            setattr(os, name, _refuse(f"os.{name}"))


if not _distributing(sys.argv):
    install()
