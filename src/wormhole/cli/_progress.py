"""Progress display of the command line (DESIGN.md: "progress display in
one place"): what the transfer commands show while bytes move, fed by the
transfer libraries' callbacks (``progress(nbytes)``, ``connected(via)``,
``file_started(...)``): the progress bars (tqdm, as wide as the terminal),
the line saying which way the bytes go, and the summary at the end. The
libraries (``wormhole.transfer``, ``wormhole.transfer_v2``) only count
bytes; what those counts look like is decided here.

Each class is named for what it shows and draws its own bars; the lines
said between them go through ``say`` so that a line never lands on top of
a bar.
"""
import contextlib
import os

import tqdm
from tqdm.utils import disp_len

from .._wording import peer_left
from ..errors import TransferError
from ..transfer_v2 import OfferLost, ReceiveFailed
from ._display import escape_text, naturalsize

# what the CLI adds to a PeerTimeout's message: the option that changes it
PEER_TIMEOUT_HINT = " (--peer-timeout)"

# the width when stderr is not a terminal (a log file, a pipe)
DEFAULT_WIDTH = 80
# below these widths, parts of the bar go (rather than be cut mid-number)
_FORMATS = [
    (60, "{l_bar}{bar}{r_bar}"),                                 # tqdm's full line
    (40, "{percentage:3.0f}% {n_fmt}/{total_fmt} {rate_fmt}"),  # no bar, no ETA
    (0, "{percentage:3.0f}% {n_fmt}/{total_fmt}"),
]


def terminal_width(stream):
    """The columns of the terminal ``stream`` writes to, or None."""
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def progress_bar(cfg, total, desc=None, position=0, initial=0, hidden=False, leave=True):
    """A byte counter with rate and ETA on stderr (none with
    --hide-progress, or ``hidden``), as wide as the terminal: a narrow one
    drops the bar, then the rate, so what is shown is never cut.
    ``desc`` names it (transfer-v2 shows the session's bar and, below it
    at ``position`` 1, the current offer's, which does not ``leave``)."""
    width = terminal_width(cfg.stderr)
    ncols = width or DEFAULT_WIDTH
    bar_format = next(f for least, f in _FORMATS if ncols - len(desc or "") >= least)
    if desc and not bar_format.startswith("{l_bar}"):
        bar_format = "{desc}: " + bar_format
    return tqdm.tqdm(total=total, unit="B", unit_scale=True, leave=leave, desc=desc,
                     file=cfg.stderr, disable=cfg.hide_progress or hidden,
                     ncols=ncols - 1 if width else ncols, bar_format=bar_format,
                     position=position, initial=initial)


def path_line(verb, path):
    """The line that says how the data goes: "Sending (->tcp:host:port).."."""
    return f"{verb} ({path}).."


def summary(verb, size, seconds, path):
    """The last line of a transfer: "Sent 8.0 MB in 1.23 s (6.5 MB/s) via
    ->relay:tcp:host:4001"."""
    rate = naturalsize(int(size / seconds)) + "/s" if seconds > 0 else "-"
    return f"{verb} {naturalsize(size)} in {seconds:.2f} s ({rate}) via {path}"


class ClassicTransferBar:
    """One classic transfer (spec 004 9.3) on stderr, fed by the
    ``wormhole.transfer`` library's callbacks: ``connected(via)`` prints
    the line saying which way the bytes go ("Sending (->tcp:host:port)..";
    the host came from the peer's hints, so it is escaped) and starts one
    bar of ``size`` bytes, ``progress(nbytes)`` advances it, ``close()``
    ends it (on every path; again is harmless)."""

    def __init__(self, cfg, verb, size):
        self._cfg = cfg
        self._verb = verb
        self.size = size  # may be set later: a receiver learns it from the offer
        self._bar = None

    def connected(self, via):
        print(path_line(self._verb, escape_text(via)), file=self._cfg.stderr, flush=True)
        self._bar = progress_bar(self._cfg, self.size)

    def progress(self, nbytes):
        self._bar.update(nbytes)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


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
        self._bar = progress_bar(cfg, size, desc, initial=initial,
                                           position=self._position, leave=not below)
        self._total = total
        self._file = None  # the current file's bar, in a directory offer
        self.moved = 0
        self.initial = initial
        self._started = None

    def update(self, nbytes):
        if self._started is None:
            self._started = self._reactor.seconds()
            say(self._cfg, path_line(self._verbs[0], self._path.description))
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
            if bar.disable:  # --hide-progress: tqdm made none of these counters
                return
            bar.n += delta
            bar.initial += delta
            bar.last_print_n += delta
            bar.refresh()

    def file_started(self, segments, size, offset):
        """The next file of a directory offer begins (from byte ``offset``
        after a resume): its bar replaces the previous file's."""
        self._close_file()
        if self._bar.disable:
            # hidden (--hide-progress): no bar for a file either; making a
            # disabled one and its label per file was a tenth of a
            # 2,000-file folder's CPU on each side (docs/performance.md)
            return
        columns = terminal_width(self._cfg.stderr) or DEFAULT_WIDTH
        self._file = progress_bar(self._cfg, size, file_label(segments, columns),
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
        return summary(self._verbs[1], self.moved, self._reactor.seconds() - started,
                                 self._path.description)

    def lost(self, who, error):
        """The error for an offer that ended before it completed: once
        bytes moved, it says how far it got (like classic's "the receiver
        closed the connection after X of Y were sent")."""
        if self._started is None or not isinstance(error, (OfferLost, ReceiveFailed)):
            return error
        return TransferError(peer_left(who, self.initial + self.moved, self.size,
                                                 "went away") + f" ({error})")


class SessionTotal:
    """The bar of a whole transfer-v2 session ("total"), above each
    offer's: drawn only when more than one offer is known to come
    (``several``); hidden otherwise, so that the offers' bars stand
    alone. ``bar`` is what an ``OfferProgress`` takes as its ``total``."""

    def __init__(self, cfg, size, several=True):
        self.bar = progress_bar(cfg, size, "total", hidden=not several)

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
