"""The operator's terminal without the JVM's start-up noise.

Two lines reach the terminal that no logging setting governs, because the
JVM prints them on its standard error itself: the launcher's ``WARNING:
Using incubator modules: jdk.incubator.vector`` (Spark asks for that
module) and DataSketches' ``Warning: Java versions > Java 11 can only
operate in restricted mode ...`` (the report's KLL sketches live on the
heap, so the restriction costs nothing). When this CLI starts the driver
JVM it gives it a pipe as standard error and copies the pipe to the real
one without those exact lines; everything else (Spark's progress bar,
errors, our own lines) passes unchanged and at once.
"""

import os
import threading

NOISE = (
    b"WARNING: Using incubator modules: jdk.incubator.vector\n",
    b"Warning: Java versions > Java 11 can only operate in restricted mode "
    b"where no off-heap operations are allowed!\n",
)


class NoiseFilter:
    """Sans-I/O: bytes in, the same bytes out minus every occurrence of
    the ``noise`` strings, wherever the input was cut. Spark's progress bar
    writes without newlines, so a noise line may start in the middle of a
    line: the filter works on the stream, holding back only a tail that
    could still begin a noise string."""

    def __init__(self, noise=NOISE):
        self._noise = tuple(noise)
        self._held = b""

    def feed(self, data):
        buf = self._held + data
        for n in self._noise:
            buf = buf.replace(n, b"")
        keep = self._tail(buf)
        self._held = buf[len(buf) - keep:] if keep else b""
        return buf[:len(buf) - keep]

    def flush(self):
        out, self._held = self._held, b""
        return out

    def _tail(self, buf):
        """The longest end of ``buf`` that is a proper prefix of a noise
        string (it may yet become one)."""
        longest = 0
        for n in self._noise:
            for k in range(min(len(n) - 1, len(buf)), longest, -1):
                if n.startswith(buf[-k:]):
                    longest = k
                    break
        return longest


class FilteredStderr:
    """File descriptor 2 of this process replaced by a pipe whose reader
    thread copies it, filtered, to the original standard error. Start it
    before the driver JVM is launched (the JVM inherits descriptor 2);
    ``stop()`` puts the original back and copies what is left."""

    def __init__(self, noise_filter=None, fd=2):
        self._filter = noise_filter or NoiseFilter()
        self._fd = fd
        self._saved = self._thread = None

    def start(self):
        self._saved = os.dup(self._fd)
        read_end, write_end = os.pipe()
        os.dup2(write_end, self._fd)
        os.close(write_end)
        self._thread = threading.Thread(
            target=self._copy, args=(read_end,), name="stderr-filter",
            daemon=True)
        self._thread.start()
        return self

    def _copy(self, read_end):
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while True:
                data = pipe.read(65536)
                if not data:
                    break
                self._write(self._filter.feed(data))
        self._write(self._filter.flush())

    def _write(self, data):
        while data:
            data = data[os.write(self._saved, data):]

    def stop(self, timeout=5):
        """The original standard error back. The copy ends when every
        holder of the pipe's write end has closed it: this process now,
        the JVM when it exits (a JVM still running keeps its copy, and
        the daemon thread ends with the process)."""
        if self._saved is None:
            return
        os.dup2(self._saved, self._fd)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            os.close(self._saved)
        self._saved = None
