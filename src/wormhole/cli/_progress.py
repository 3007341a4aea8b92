"""Progress display of the command line (DESIGN.md: "progress display in
one place"): what the transfer commands show while bytes move, fed by the
transfer libraries' callbacks (``progress(nbytes)``, ``file_started(...)``).

Each class is named for what it shows and draws its own bars; the lines
said between them go through ``say`` so that a line never lands on top of
a bar.
"""
import contextlib

import tqdm
from tqdm.utils import disp_len

from ..errors import TransferError
from ..transfer_v2 import OfferLost, ReceiveFailed
from . import _transfer
from ._display import escape_text


def say(cfg, line):
    """One line on stderr above the progress bars: tqdm clears them, writes
    the line and draws them again below it (a plain print would write
    over a bar, and the session's bar would overwrite the line)."""
    tqdm.tqdm.write(line, file=cfg.stderr)
    cfg.stderr.flush()


def file_label(segments, columns):
    """A file's path inside a directory offer as the name of its bar: the
    peer's text escaped, and cut from the left ("...") to at most a third
    of the terminal's ``columns`` (display width: wide characters count
    two), so that the bar, counts and rate still fit on the line."""
    label = escape_text("/".join(segments))
    room = max(columns // 3, 8)
    if disp_len(label) <= room:
        return label
    while disp_len(label) > room - 3:
        label = label[1:]
    return "..." + label


class OfferProgress:
    """One transfer-v2 offer's bytes: its progress bar (and the
    session's), the path line when its first bytes move, and what to say
    when it ends. For a directory, ``file_started`` adds the current
    file's bar below the offer's (named by the file, gone when the next
    begins or the offer ends). ``path`` is the session's
    ``ConnectionPath`` (its ``description`` names the connection)."""

    def __init__(self, reactor, cfg, path, verbs, size, desc, total=None, initial=0):
        self._reactor = reactor
        self._cfg = cfg
        self._path = path
        self._verbs = verbs  # ("Sending", "Sent") or ("Receiving", "Received")
        self.size = size
        # below the session's bar, if any, and gone when done (the summary
        # line says the rest); alone, it stays, as classic's does
        below = total is not None and not total.disable
        self._position = 1 if below else 0
        self._bar = _transfer.progress_bar(cfg, size, desc, initial=initial,
                                           position=self._position, leave=not below)
        self._total = total
        self._file = None  # the current file's bar, in a directory offer
        self.moved = 0
        self.initial = initial
        self._started = None

    def update(self, nbytes):
        if self._started is None:
            self._started = self._reactor.seconds()
            say(self._cfg, _transfer.path_line(self._verbs[0], self._path.description))
        self.moved += nbytes
        self._bar.update(nbytes)
        if self._file is not None:
            self._file.update(nbytes)
        if self._total is not None:
            self._total.update(nbytes)

    def follow(self, start):
        """After a resume, the sender's answer says how many bytes we keep
        (``start``; fewer than we asked when kept files changed at the
        sender): the bar's starting value follows, without counting the
        difference as bytes that moved (tqdm's ``initial`` and last
        printed count move with it, so the rate stays true)."""
        delta = start - self.initial
        if delta:
            self.initial = start
            bar = self._bar
            bar.n += delta
            bar.initial += delta
            bar.last_print_n += delta
            bar.refresh()

    def file_started(self, segments, size, offset):
        """The next file of a directory offer begins (from byte ``offset``
        after a resume): its bar replaces the previous file's."""
        self._close_file()
        columns = _transfer.terminal_width(self._cfg.stderr) or _transfer.DEFAULT_WIDTH
        self._file = _transfer.progress_bar(self._cfg, size, file_label(segments, columns),
                                            initial=offset, position=self._position + 1,
                                            leave=False)

    def _close_file(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self):
        self._close_file()
        self._bar.close()

    @property
    def started(self):
        """When the first bytes moved (reactor seconds), or None."""
        return self._started

    def summary(self):
        started = self._started if self._started is not None else self._reactor.seconds()
        return _transfer.summary(self._verbs[1], self.moved, self._reactor.seconds() - started,
                                 self._path.description)

    def lost(self, who, error):
        """The error for an offer that ended before it completed: once
        bytes moved, it says how far it got (like classic's "the receiver
        closed the connection after X of Y were sent")."""
        if self._started is None or not isinstance(error, (OfferLost, ReceiveFailed)):
            return error
        return TransferError(_transfer.peer_left(who, self.initial + self.moved, self.size,
                                                 "went away") + f" ({error})")


class SessionTotal:
    """The bar of a whole transfer-v2 session ("total"), above each
    offer's: drawn only when more than one offer is known to come
    (``several``); hidden otherwise, so that the offers' bars stand
    alone. ``bar`` is what an ``OfferProgress`` takes as its ``total``."""

    def __init__(self, cfg, size, several=True):
        self.bar = _transfer.progress_bar(cfg, size, "total", hidden=not several)

    @contextlib.contextmanager
    def paused(self):
        """While a human answers a question: the bar is cleared and not
        drawn until the answer, so the question starts a line of its own
        instead of following the bar (which redrew over it), and the
        time the human takes counts in neither rate nor ETA."""
        bar = self.bar
        if bar.disable:
            yield
            return
        bar.clear()
        bar.disable = True
        try:
            yield
        finally:
            bar.disable = False
            bar.unpause()
            bar.refresh()

    def close(self):
        self.bar.close()
