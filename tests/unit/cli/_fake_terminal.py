"""A stream the CLI's screen and progress code take for a terminal: it
keeps what was written (a StringIO), and its ``fileno()`` is a real
pseudo-terminal's, of a chosen size, so that ``os.get_terminal_size``
answers as on a terminal (no process, no network: a unit-test helper).
Without ``tty`` it is a log or a pipe: no terminal, no size."""
import fcntl
import io
import os
import struct
import termios


class FakeTerminal(io.StringIO):

    def __init__(self, testcase, tty=True, columns=80):
        super().__init__()
        self._fd = None
        if tty:
            master, slave = os.openpty()
            testcase.addCleanup(os.close, master)
            testcase.addCleanup(os.close, slave)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
            self._fd = slave

    def isatty(self):
        return self._fd is not None

    def fileno(self):
        if self._fd is None:
            raise io.UnsupportedOperation("fileno")
        return self._fd
