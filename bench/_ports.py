"""A free TCP port for a server the bench starts as a child process (it
must be told its port on the command line)."""

import socket
import time


def free_port(host="127.0.0.1"):
    """A port on ``host`` that was free a moment ago."""
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port, proc, what, tries=400, host="127.0.0.1"):
    """Return once ``host:port`` accepts a connection (0.05 s between
    tries); otherwise kill ``proc`` and stop the bench with its stderr."""
    for _ in range(tries):
        c = socket.socket()
        try:
            c.connect((host, port))
            return
        except OSError:
            time.sleep(0.05)
        finally:
            c.close()
    proc.kill()
    raise SystemExit(f"{what} did not start: {proc.stderr.read().decode()}")
