"""What an interrupted transfer-v2 receive keeps, as the command line
says it (docs/cli.md "What an interrupted receive keeps"): the line said
after an interrupted receive, and ``wormhole receive --discard-partial``.
Finding, discarding and expiring kept partials is the library's
(``wormhole.session``: ``kept_in``, ``kept_for``, ``discard``, ``expire``).
"""
import os

from ..session import discard, escape_text, naturalsize

DISCARD_HINT = "wormhole receive --discard-partial"


def kept_line(kept, what):
    """The line after an interrupted receive (``what``: "file 'NAME'")."""
    folder = escape_text(kept.folder)
    return (f"Kept {naturalsize(kept.nbytes)} of {what} in {folder} as "
            f"{escape_text(kept.names[0])}: the same sent again into this folder resumes "
            f"from there; '{DISCARD_HINT}' in this folder removes it")


def discard_command(cfg):
    """``wormhole receive --discard-partial``: remove what interrupted
    receives kept in the receive folder (the current one, or ``-o DIR``),
    saying what went; no wormhole is made."""
    folder = os.path.abspath(cfg.cwd or os.getcwd())
    if cfg.output_file and os.path.isdir(os.path.join(folder, cfg.output_file)):
        folder = os.path.abspath(os.path.join(folder, cfg.output_file))
    removed = discard(folder)
    if not removed:
        print(f"Nothing kept by an interrupted receive in {escape_text(folder)}",
              file=cfg.stderr, flush=True)
    for kept in removed:
        print(f"Removed {naturalsize(kept.nbytes)} kept by an interrupted receive: "
              f"{', '.join(escape_text(n) for n in kept.names)}", file=cfg.stderr, flush=True)
