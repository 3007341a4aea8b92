"""The cyclic garbage collector over the life of a ``wormhole`` process
(docs/performance.md, "Session 8: the fixed part").

Starting the CLI imports some 700 modules: ~110,000 objects tracked by
the collector, nearly all of them alive until the process ends. The
collector's passes over them while they are being made cost ~0.05 s of
CPU, and the full passes the interpreter makes while it finalizes
another ~0.08 s: together a quarter of a small transfer's CPU on each
side, collecting ~3,000 objects (~0.3 MB) in all.

So, only when the CLI runs as the program (``start`` from the click
group's ``main`` with the arguments of the command line; never in a
process that calls it with its own arguments, as tests do):

- ``Collector(program=True)``: no automatic collection while the command is imported and
  set up;
- ``Collector.resume`` (the reactor runs): what exists by then is moved to the
  permanent generation (``gc.freeze``), which later passes skip, and
  collection resumes for what the command makes from then on: a long
  transfer's garbage is collected as before;
- ``Collector.leave`` (the reactor has stopped): what is left is frozen too, so
  the interpreter's finalization does not walk it again. Everything
  else about the exit is unchanged: atexit handlers run, stdout and
  stderr are flushed, every object that is not in a reference cycle is
  released (a file still open would be closed), the exit status is the
  command's. What a frozen cycle holds is not finalized: the CLI closes
  its files itself before the reactor stops (``tests/cli/test_exit.py``
  checks that a received file, the command's output and its status are
  whole).
"""
import gc


class Collector:
    """The collector's schedule for one ``wormhole`` process, made by the
    click group's ``main`` and kept in the command's ``Config``.
    ``program``: the CLI runs as the program, on the command line's
    arguments; then nothing is collected until the reactor runs."""

    def __init__(self, program=False):
        self._program = program
        if program:
            gc.disable()

    def resume(self):
        """The reactor runs: set aside what start-up made, collect the rest."""
        if self._program:
            gc.freeze()
            gc.enable()

    def leave(self):
        """The reactor has stopped: the process only exits from here."""
        if self._program:
            gc.freeze()
