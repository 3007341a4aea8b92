"""Progress lines on stderr, one per stage, so a long run shows where it
is (docs/analytics.md, "Commands": progress lines)."""

import sys
import time


class Progress:
    def __init__(self, name, stream=None, quiet=False):
        self._name = name
        self._stream = stream or sys.stderr
        self._quiet = quiet
        self._t0 = time.monotonic()

    def say(self, text):
        if not self._quiet:
            elapsed = time.monotonic() - self._t0
            self._stream.write(f"[{self._name} {elapsed:7.1f}s] {text}\n")
            self._stream.flush()
