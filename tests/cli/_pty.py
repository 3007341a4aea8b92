"""Our ``wormhole`` in a pseudo-terminal (Twisted's ``usePTY``): readline
and the terminal-only paths (colour QR code, progress bar width) see a real
terminal. stdout and stderr arrive together, as ``run.stdout``."""
import os

from twisted.internet import reactor

from ._process import CLIProcess, our_source


def open_terminal():
    """A new pseudo-terminal (master, slave, name) for ``spawn_in_pty``'s
    ``terminal``, so that its settings can be read before the command
    starts. Both ends are the spawned process's transport's to close
    (Twisted closes the slave in the parent at once, the master with the
    transport)."""
    master, slave = os.openpty()
    return master, slave, os.ttyname(slave)


def spawn_in_pty(testcase, argv, name, env=None, cwd=None, columns=80, terminal=None):
    """``terminal``: from ``open_terminal`` (else Twisted opens one)."""
    p = CLIProcess(name)
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
                             "WORMHOLE_RELAY_URL", "WORMHOLE_TRANSIT_HELPER")}
    # readline and tqdm read the size from the terminal; TERM makes
    # readline use it (no TERM: a "dumb" terminal without completion)
    full_env.update({"TERM": "xterm", "COLUMNS": str(columns), "LINES": "40"})
    full_env.update(our_source(argv))
    full_env.update(env or {})
    reactor.spawnProcess(p, argv[0], argv, env=full_env, path=cwd, usePTY=terminal or True)
    _set_size(p.transport, columns)
    testcase.addCleanup(p.kill)
    return p


def _set_size(transport, columns):
    import fcntl
    import struct
    import termios
    fcntl.ioctl(transport.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
