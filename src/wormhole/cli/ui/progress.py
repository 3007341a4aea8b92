"""Progress display of the command line
(docs/architecture.md, "Progress display in one place"): what the transfer
commands show while bytes move, fed by the transfer libraries' callbacks
(``progress(nbytes)``, ``connected(via)``, ``file_started(...)``): the
progress bars (tqdm, as wide as the terminal), the line saying which way the
bytes go, and the summary at the end. The libraries (``wormhole.transfer``,
``wormhole.transfer_v2``) only count bytes; what those counts look like is
decided here.

Each class is named for what it shows and draws its own bars; the lines
said between them go through ``say`` so that a line never lands on top of
a bar. While a human is asked (``asking``), the bars draw nothing and the
lines wait for the answer (``_screen``).
"""
import os

from ...session import escape_text, lost, naturalsize
from .screen import say

# what the CLI adds to a PeerTimeout's message: the option that changes it
PEER_TIMEOUT_HINT = " (--peer-timeout)"

# the width of a terminal whose size cannot be read any more
DEFAULT_WIDTH = 80
# below these widths, parts of the bar go (rather than be cut mid-number)
_FORMATS = [
    (60, "{l_bar}{bar}{r_bar}"),                                 # tqdm's full line
    (40, "{percentage:3.0f}% {n_fmt}/{total_fmt} {rate_fmt}"),  # no bar, no ETA
    (0, "{percentage:3.0f}% {n_fmt}/{total_fmt}"),
]

_STREAM_FORMAT = "{n_fmt}B {rate_fmt} [{elapsed}]"

class HiddenBar:
    """A bar that is not shown (--hide-progress, or ``hidden``): what a
    disabled tqdm bar does, which is nothing (it does not even count),
    without importing tqdm or making one."""
    disable = True

    def __init__(self, initial=0):
        self.n = self.initial = self.last_print_n = initial

    def update(self, n=1):
        pass

    def refresh(self):
        pass

    def unpause(self):
        pass

    def clear(self):
        pass

    def close(self):
        pass


def terminal_width(stream):
    """The columns of the terminal ``stream`` writes to, or None."""
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def progress_bar(cfg, total, desc=None, position=0, initial=0, hidden=False, leave=True,
                 clock=None):
    """A byte counter with rate and ETA on stderr (none with
    --hide-progress, or ``hidden``, or when stderr is no terminal: in a log
    or a pipe a bar is a heap of carriage returns and cursor moves, and
    the lines said around it tell the same), as wide as the terminal: a
    narrow one drops the bar, then the rate, so what is shown is never cut.
    ``desc`` names it (transfer-v2 shows the session's bar and, below it
    at ``position`` 1, the current offer's, which does not ``leave``).
    ``clock``: its time (the reactor's ``seconds``), else the system's.
    ``total`` None (a stream): the bytes and the rate only."""
    width = terminal_width(cfg.stderr)
    # a terminal that reports no width (0 columns: `script` without a
    # size) has no room for a bar: as without a terminal
    if cfg.hide_progress or hidden or not width:
        return HiddenBar(initial)
    room = width - len(desc or "")
    bar_format = next((f for least, f in _FORMATS if room >= least), _FORMATS[-1][1])
    if total is None:
        # a stream (docs/cli.md "Streams"): no total, so no bar, no
        # percentage, no ETA: the bytes so far and the rate
        bar_format = _STREAM_FORMAT
    if desc and not bar_format.startswith("{l_bar}"):
        bar_format = "{desc}: " + bar_format
    from .bar import Bar  # tqdm: only for a bar that is shown (bar)
    return Bar(total=total, unit="B", unit_scale=True, leave=leave, desc=desc,
               file=cfg.stderr, ncols=max(width - 1, 1), bar_format=bar_format,
               position=position, initial=initial, screen=cfg.screen, clock=clock)


def path_line(verb, path):
    """The line that says how the data goes: "Sending (->tcp:host:port).."."""
    return f"{verb} ({path}).."


def summary(verb, size, seconds, path):
    """The last line of a transfer: "Sent 8.0 MB in 1.23 s (6.5 MB/s) via
    ->relay:tcp:host:4001"."""
    rate = naturalsize(int(size / seconds)) + "/s" if seconds > 0 else "-"
    return f"{verb} {naturalsize(size)} in {seconds:.2f} s ({rate}) via {path}"


class ClassicTransferBar:
    """One classic transfer (File-transfer protocol, "Transit") on
    stderr, fed by the ``wormhole.transfer`` library's callbacks:
    ``connected(via)`` prints the line saying which way the bytes go
    ("Sending (->tcp:host:port).."; the host came from the peer's hints,
    so it is escaped) and starts one bar of ``size`` bytes,
    ``progress(nbytes)`` advances it, ``close()`` ends it (on every
    path; again is harmless)."""

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


def count_as_done(bar, nbytes):
    """``nbytes`` more on ``bar`` that did not move now (a resume's kept
    bytes): its count, starting value and last drawn count move together,
    so that neither its rate nor its ETA takes them as transfer."""
    if bar is None or bar.disable or not nbytes:
        return
    bar.n += nbytes
    bar.initial += nbytes
    bar.last_print_n += nbytes
    bar.refresh()


def file_label(segments, columns):
    """A file's path inside a directory offer as the name of its bar: the
    peer's text escaped, and cut from the left ("...") to at most a third
    of the terminal's ``columns`` (display width: wide characters count
    two), so that the bar, counts and rate still fit on the line."""
    from tqdm.utils import disp_len  # only for a bar that is shown
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
    ``ConnectionPath`` (its ``description`` names the connection).

    Bytes a resume keeps (``initial``, ``follow``) count as done on both
    bars from the start, never as transfer in a rate; the bars' time
    starts with the first byte (an offer waits for the peer's human
    first: that wait is not transfer time either)."""

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
        self._bar = progress_bar(cfg, size, desc, initial=initial, position=self._position,
                                 leave=not below, clock=reactor.seconds)
        self._total = total
        count_as_done(total, initial)
        self._file = None  # the current file's bar, in a directory offer
        self.moved = 0
        self.initial = initial
        self._started = None

    def update(self, nbytes):
        if self._started is None:
            self._started = self._reactor.seconds()
            # the wait for the peer's answer and the gap since the last
            # offer: not in the rates or ETAs
            self._bar.unpause()
            if self._total is not None:
                self._total.unpause()
            say(self._cfg, path_line(self._verbs[0], self._path.description))
        self.moved += nbytes
        self._bar.update(nbytes)
        if self._file is not None:
            self._file.update(nbytes)
        if self._total is not None:
            self._total.update(nbytes)

    def follow(self, start):
        """A resume keeps ``start`` bytes: the receiver learns it from the
        sender's answer (fewer than it asked when kept files changed at
        the sender), the sender before its first byte (the library's
        ``resumed``). The bars' starting values follow, without counting
        the difference as bytes that moved (``count_as_done``)."""
        delta = start - self.initial
        if delta:
            self.initial = start
            count_as_done(self._bar, delta)
            count_as_done(self._total, delta)

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
                                 initial=offset, position=self._position + 1, leave=False,
                                 clock=self._reactor.seconds)

    def _close_file(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self):
        self._close_file()
        self._bar.close()

    def seconds(self):
        """From the first byte to now (0 before it)."""
        if self._started is None:
            return 0.0
        return self._reactor.seconds() - self._started

    def summary(self):
        return summary(self._verbs[1], self.moved, self.seconds(), self._path.description)

    def lost(self, who, error):
        """The error for an offer that ended before it completed: once
        bytes moved, it says how far it got (like classic's "the receiver
        closed the connection after X of Y were sent")."""
        if self._started is None:
            return error
        return lost(who, error, self.initial + self.moved, self.size)


class SessionTotal:
    """The bar of a whole transfer-v2 session ("total"), above each
    offer's: drawn only when more than one offer is known to come
    (``several``); hidden otherwise, so that the offers' bars stand
    alone. ``bar`` is what an ``OfferProgress`` takes as its ``total``."""

    def __init__(self, cfg, size, several=True, clock=None):
        self.bar = progress_bar(cfg, size, "total", hidden=not several, clock=clock)

    def close(self):
        self.bar.close()
