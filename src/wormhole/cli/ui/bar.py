"""The command's tqdm bar (docs/cli.md "The terminal"): as wide as the
terminal, drawing nothing while a human is asked (``screen.Screen``).
tqdm is imported with this module, which ``progress.progress_bar``
imports for the first bar that is shown: with every bar hidden
(--hide-progress, or a session's total with one offer) the command
never imports it. Importing it and making its first bar (whose write
lock is a multiprocessing lock) cost ~0.01 s of CPU, a few per cent of a
small transfer's (docs/performance.md, "Session 8: the fixed part")."""
import tqdm

from .screen import write


class _Drawn:
    """A tqdm bar of the command whose ``screen`` (a ``screen.Screen``)
    it draws on: nothing while a question is open (it keeps counting).
    ``clock`` (a function of no arguments, the reactor's ``seconds``) is
    its time, for its rate and ETA, if given."""

    def __init__(self, *args, screen, clock=None, **kwargs):
        self._screen = screen  # before tqdm's __init__, which draws
        super().__init__(*args, **kwargs)
        if clock is not None:
            self._time = clock
            self.start_t = self.last_print_t = clock()
        screen.add(self)

    def display(self, msg=None, pos=None):
        if self._screen.asking:
            return False
        return super().display(msg, pos)

    def clear(self, nolock=False):
        if self._screen.asking:
            return  # cleared when the question opened
        super().clear(nolock)

    def close(self):
        if self._screen.asking and not self.disable:
            if self.leave:
                # its last state, said after the answer (tqdm's own close
                # shows the overall rate there, not the smoothed one)
                self._ema_dt = lambda: None
                last, stream = str(self), self.fp
                self._screen.hold(lambda: write(self._screen, stream, last))
            self.leave = False  # nothing to draw or clear now
        super().close()



class Bar(_Drawn, tqdm.tqdm):
    __doc__ = _Drawn.__doc__
