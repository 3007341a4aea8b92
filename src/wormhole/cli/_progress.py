"""How the CLI shows a transfer under way on stderr: the progress bars
(tqdm, as wide as the terminal), the line saying which way the bytes go,
and the summary at the end. The libraries (``wormhole.transfer``,
``wormhole.transfer_v2``) only count bytes through plain ``progress
(nbytes)`` callables; what those counts look like is decided here.
"""
import os

import tqdm

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
