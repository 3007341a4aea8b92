"""Questions to the human (``ok? (Y/n): ``, the verifier, ``Text to
send: ``) and ``wormhole share``'s lines: where they are read, and how.
"""
from twisted.internet import defer

from .._rlcompleter import _in_daemon_thread


def read_line(reactor, prompt):
    """Ask the human (``input()`` in a daemon thread: it blocks, and must
    not hold up the process's end)."""
    return _in_daemon_thread(reactor, input, prompt)


def ask(reactor, cfg, prompt):
    """The human's answer to ``prompt`` (``cfg.read_line`` in tests)."""
    reader = cfg.read_line or read_line
    return reader(reactor, prompt)


class Lines:
    """``wormhole share``'s input: every line the human types is the
    answer to the question asked, if one is pending (otherwise ignored);
    end of input (Ctrl-D) fails the pending questions with EOFError and
    fires ``when_ended()``."""

    def __init__(self, reactor, cfg):
        self._reactor = reactor
        self._cfg = cfg
        self._waiting = []
        self._eof = defer.Deferred()
        self._read()

    @defer.inlineCallbacks
    def _read(self):
        reader = self._cfg.read_line or read_line
        while True:
            try:
                line = yield reader(self._reactor, "")
            except EOFError:
                break
            if self._waiting:
                self._waiting.pop(0).callback(line)
        while self._waiting:
            self._waiting.pop(0).errback(EOFError())
        self._eof.callback(None)

    def when_ended(self):
        """Fires once, at the end of input."""
        return self._eof

    def ask(self, reactor, cfg, prompt):
        print(prompt, end="", file=cfg.stdout, flush=True)
        if self._eof.called:
            return defer.fail(EOFError())
        d = defer.Deferred()
        self._waiting.append(d)
        return d
