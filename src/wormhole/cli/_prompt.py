"""Questions to the human (``ok? (Y/n): ``, the verifier, ``Text to
send: ``) and ``wormhole share``'s lines: where they are read, and how.

A prompt is answered in the terminal's own line mode (``sys.stdin``'s
``readline()`` in a thread), not with ``input()``: once GNU readline is
loaded (the code prompt's tab completion loads it), ``input()`` on a
terminal switches it to ``-icanon -echo`` while it waits and switches it
back only when a line comes. A command that ends while a question is
open (Ctrl-C at the prompt, the peer gone, ``share`` ended by the peer)
would leave the user's shell that way (issue 22). The terminal is also
restored on every exit by ``_terminal.TerminalState``; reading this way
means that nothing changes it in the first place.

Every question goes through the command's ``Screen`` (``_screen``): no
progress bar draws while it is open, and its line is ended if the
command ends before the answer.
"""
import sys

from twisted.internet import defer

from .._rlcompleter import _in_daemon_thread


def _read_line_plain(prompt, stdin, stdout):
    """Blocking: write ``prompt``, read one line (EOFError at end of input)."""
    stdout.write(prompt)
    stdout.flush()
    line = stdin.readline()
    if not line:
        raise EOFError("end of input")
    return line[:-1] if line.endswith("\n") else line


def read_line(reactor, prompt):
    """Ask the human: the prompt on stdout, the answer from stdin (in a
    daemon thread: it blocks, and must not hold up the process's end)."""
    return _in_daemon_thread(reactor, _read_line_plain, prompt, sys.stdin, sys.stdout)


def ask(reactor, cfg, prompt):
    """The human's answer to ``prompt`` (``cfg.read_line`` in tests)."""
    reader = cfg.read_line or read_line
    return cfg.screen.asked(cfg.stderr, lambda: reader(reactor, prompt))


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
        return cfg.screen.asked(cfg.stderr, lambda: self._question(cfg, prompt))

    def _question(self, cfg, prompt):
        print(prompt, end="", file=cfg.stdout, flush=True)
        if self._eof.called:
            return defer.fail(EOFError())
        d = defer.Deferred()
        self._waiting.append(d)
        return d
