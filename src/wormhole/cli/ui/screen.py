"""The terminal while a human is asked something
(docs/cli.md "The terminal"): the questions and the progress bars share
one screen, and a bar redrawn while a question is open lands on the
question's line (``wormhole share``: only the ``o`` of ``ok? (Y/n):``
stayed visible under a concurrent offer's bar).

So, while a question is open (``Screen.asked()``, through which every
question of ``_prompt`` goes):

- every progress bar of the command (``bar.Bar``, which registers
  here) is cleared and draws nothing; it keeps counting, and is drawn
  again after the answer;
- the lines said meanwhile wait for the answer (``hold``), as does the
  last line of a bar that ends meanwhile;
- a bar that did not move meanwhile does not count the wait in its rate
  or ETA (tqdm's ``unpause``): the time the human took is not transfer
  time.

A question still open when the command ends (the peer gone, Ctrl-C,
SIGTERM) is abandoned (``abandon``, before the ERROR line and at the end
of ``command()``, around the whole run): its line is ended, so that what
follows (the ERROR line, the shell's prompt) starts a line of its own,
and the waiting lines are said. So is a question that end of input
(Ctrl-D) answered: the terminal does not end the line then. The line is ended only on a
terminal: in a log or a pipe there is no line to share.

One Screen per command, made with its ``Config`` (``cfg.screen``, beside
the streams it is about).
"""
import contextlib
import weakref

from twisted.internet import defer


class Screen:
    def __init__(self):
        self.asking = 0        # questions open
        self._round = 0        # abandon() starts a new one: older questions end in it
        self._held = []        # what to say after the answer (callables)
        self._bars = weakref.WeakSet()
        self._before = {}      # each bar's count when the first question opened

    def add(self, bar):
        """A progress bar of this command (a tqdm bar)."""
        self._bars.add(bar)

    def bars(self):
        """The bars being shown."""
        return [bar for bar in list(self._bars) if not bar.disable]

    def asked(self, stream, ask):
        """A human is asked: ``ask()`` writes the question and returns a
        Deferred of the answer, which this returns. ``stream`` is where
        the bars draw (flushed once they are cleared, before the
        question is written)."""
        if not self.asking:
            bars = self.bars()
            self._before = {bar: bar.n for bar in bars}
            for bar in bars:
                bar.clear()
            stream.flush()
        self.asking += 1
        started_in = self._round

        def answered(result):
            if started_in != self._round:
                return result  # abandoned: its line was ended then
            if getattr(result, "check", lambda *e: False)(EOFError, defer.CancelledError):
                # ended by Ctrl-D, or given up (its offer over): the
                # terminal did not end the question's line
                _end_line(stream)
            self.asking -= 1
            if not self.asking:
                self._answered()
            return result
        return defer.maybeDeferred(ask).addBoth(answered)

    def hold(self, say):
        """While a question is open, keep ``say`` (a callable writing a
        line) until the answer and return True; else return False (the
        caller says it now)."""
        if not self.asking:
            return False
        self._held.append(say)
        return True

    def abandon(self, stream):
        """The command ends with a question open: its line ends (on
        ``stream``, the terminal's), the held lines are said, and the
        questions' own ends change nothing any more."""
        if not self.asking:
            return
        _end_line(stream)
        self.asking = 0
        self._round += 1
        self._answered()

    @contextlib.contextmanager
    def command(self, stream):
        """Around a whole command: a question still open at its end
        (Ctrl-C, SIGTERM) is abandoned."""
        try:
            yield self
        finally:
            self.abandon(stream)

    def _answered(self):
        bars = self.bars()
        for bar in bars:
            if bar.n == self._before.get(bar, bar.initial):
                bar.unpause()  # idle while the human decided: not transfer time
        self._before = {}
        held, self._held = self._held, []
        for say in held:
            say()
        for bar in bars:
            bar.refresh()


def _end_line(stream):
    """The human's line, left where the question put the cursor, ends."""
    try:
        on_terminal = stream.isatty()
    except (AttributeError, ValueError):
        on_terminal = False
    if on_terminal:
        stream.write("\n")
        stream.flush()


def write(screen, stream, line):
    """``line`` on ``stream`` above ``screen``'s bars: they are cleared,
    the line written, the bars drawn again below it. With no bar shown
    there is none to clear or draw: the line alone (what tqdm writes
    then), and tqdm is not imported for it (``bar``)."""
    if screen.bars():
        from .bar import Bar
        Bar.write(line, file=stream)
    else:
        stream.write(line + "\n")
    stream.flush()


def say(cfg, line):
    """One line on stderr above the progress bars: tqdm clears them, writes
    the line and draws them again below it (a plain print would write
    over a bar, and the session's bar would overwrite the line). While a
    human is asked, the line waits for the answer (the question's line
    is the human's)."""
    if not cfg.screen.hold(lambda: write(cfg.screen, cfg.stderr, line)):
        write(cfg.screen, cfg.stderr, line)


def end_questions(cfg):
    """The command ends: a question still open (the peer gone, Ctrl-C)
    has its line ended, so that what follows starts a line of its own."""
    cfg.screen.abandon(cfg.stderr)
