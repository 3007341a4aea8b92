"""The terminal is left as it was found (docs/cli.md "The terminal"):
one place that saves the settings of the controlling terminal when the
command starts and puts them back when it ends, whatever ends it --
success, an error, Ctrl-C, SIGTERM, the peer gone, end of input in
``share``.

Only stdin's terminal is ours to restore (the one the human types in);
without a terminal (a pipe, a file, Windows without termios) there is
nothing to do.
"""
import os
import signal

try:
    import termios
except ImportError:  # not a POSIX system
    termios = None


class TerminalState:
    """``with TerminalState(sys.stdin): run()``: the termios settings of
    ``stream``'s terminal are the same after the block as before it."""

    def __init__(self, stream):
        self._fd = None
        self._saved = None
        if termios is None:
            return
        try:
            fd = stream.fileno()
            if os.isatty(fd):
                self._saved = termios.tcgetattr(fd)
                self._fd = fd
        except (AttributeError, ValueError, OSError, termios.error):
            pass  # no usable terminal: nothing to restore

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.restore()
        return False

    def restore(self):
        """Put the saved settings back, if they changed. A process in the
        background would be stopped by SIGTTOU for touching its terminal:
        the signal is held off while we do."""
        if self._saved is None:
            return
        try:
            if termios.tcgetattr(self._fd) == self._saved:
                return
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
            try:
                termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        except (OSError, termios.error):
            pass  # the terminal went away (hung up): nothing left to restore
