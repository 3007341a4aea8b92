"""Questions to the human (``ok? (Y/n): ``, the verifier, ``Text to
send: ``) and ``wormhole share``'s lines: where they are read, and how.

A prompt is answered in the terminal's own line mode (``sys.stdin``'s
``readline()`` in a thread), not with ``input()``: once GNU readline is
loaded (the code prompt's tab completion loads it), ``input()`` on a
terminal switches it to ``-icanon -echo`` while it waits and switches it
back only when a line comes. A command that ends while a question is
open (Ctrl-C at the prompt, the peer gone, ``share`` ended by the peer)
would leave the user's shell that way (docs/cli.md, "The terminal"). The
terminal is also restored on every exit by ``_terminal.TerminalState``;
reading this way means that nothing changes it in the first place.

Every question goes through the command's ``Screen`` (``_screen``): no
progress bar draws while it is open, and its line is ended if the
command ends before the answer.
"""
import sys

from twisted.internet import defer
from twisted.python.failure import Failure

from ... import read_in_thread


def _read_line_plain(stdin):
    """Blocking: one line of ``stdin`` (EOFError at end of input)."""
    line = stdin.readline()
    if not line:
        raise EOFError("end of input")
    return line[:-1] if line.endswith("\n") else line


class WaitingQuestions:
    """The questions waiting for the human's next line, oldest first. A
    question given up (``cancel()`` on its Deferred: the offer it was
    about ended before the answer) leaves the queue, so the line the
    human types next answers the question on the screen, not the stale
    one (the stale one took it before)."""

    def __init__(self):
        self._waiting = []
        self._end = None      # the failure every later question gets

    def __bool__(self):
        return bool(self._waiting)

    def wait(self):
        """A Deferred of the next line; cancelling it gives the question up."""
        if self._end is not None:
            return defer.fail(self._end)
        d = defer.Deferred(canceller=self._waiting.remove)
        self._waiting.append(d)
        return d

    def answer(self, line):
        """A line came: the oldest waiting question's answer (a line
        typed while none waits answers nothing)."""
        if self._waiting:
            self._waiting.pop(0).callback(line)

    def end(self, failure=None):
        """No more lines (EOFError: end of input): the waiting questions
        and every later one fail."""
        self._end = failure if failure is not None else Failure(EOFError("end of input"))
        while self._waiting:
            self._waiting.pop(0).errback(self._end)


class TerminalLines:
    """How ``send`` and ``receive`` read their answers: stdin is read (in
    a daemon thread: ``readline`` blocks, and must not hold up the
    process's end) only while a question waits, one read at a time, so
    that a read left blocked by a question given up answers the next
    question instead of racing a second reader for the line."""

    def __init__(self, stdin=None, stdout=None):
        self._stdin = stdin
        self._stdout = stdout
        self._questions = WaitingQuestions()
        self._reading = False

    def read_line(self, reactor, prompt):
        """Write ``prompt``; a Deferred of the answer."""
        stdout = self._stdout or sys.stdout
        stdout.write(prompt)
        stdout.flush()
        d = self._questions.wait()
        self._read(reactor)
        return d

    def _read(self, reactor):
        if self._reading or not self._questions:
            return
        self._reading = True
        read = read_in_thread(reactor, _read_line_plain, self._stdin or sys.stdin)
        read.addCallbacks(self._got, self._ended, callbackArgs=(reactor,))

    def _got(self, line, reactor):
        self._reading = False
        self._questions.answer(line)
        self._read(reactor)

    def _ended(self, failure):
        self._reading = False
        self._questions.end(failure)


def ask(reactor, cfg, prompt):
    """The human's answer to ``prompt`` (``cfg.read_line`` in tests);
    cancelling the Deferred gives the question up."""
    reader = cfg.read_line or cfg.terminal_lines.read_line
    return cfg.screen.asked(cfg.stderr, lambda: reader(reactor, prompt))


class Lines:
    """``wormhole share``'s input: every line the human types is the
    answer to the question asked, if one is pending, otherwise given to
    ``unasked(line)`` (a path to offer); end of input (Ctrl-D) fails the
    pending questions with EOFError and fires ``when_ended()``."""

    def __init__(self, reactor, cfg, unasked=lambda line: None):
        self._reactor = reactor
        self._cfg = cfg
        self._unasked = unasked
        self._questions = WaitingQuestions()
        self._eof = defer.Deferred()
        self._read()

    @defer.inlineCallbacks
    def _read(self):
        reader = self._cfg.read_line or self._cfg.terminal_lines.read_line
        while True:
            try:
                line = yield reader(self._reactor, "")
            except EOFError:
                break
            if self._questions:
                self._questions.answer(line)
            else:
                self._unasked(line)
        self._questions.end()
        self._eof.callback(None)

    def when_ended(self):
        """Fires once, at the end of input."""
        return self._eof

    def ask(self, reactor, cfg, prompt):
        return cfg.screen.asked(cfg.stderr, lambda: self._question(cfg, prompt))

    def _question(self, cfg, prompt):
        print(prompt, end="", file=cfg.stdout, flush=True)
        return self._questions.wait()
