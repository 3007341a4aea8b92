"""A free TCP port for a server the bench starts as a child process (it
must be told its port on the command line)."""

import socket


def free_port(host="127.0.0.1"):
    """A port on ``host`` that was free a moment ago."""
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port
