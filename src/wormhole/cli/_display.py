"""How the CLI shows things (settled against the reference 0.24 by
running it; docs/cli.md).

Every text that came from the peer or a server is shown through
``wormhole.session.escape_text`` (the one escaping function; re-exported
here for the CLI's modules, as is ``naturalsize``, which the transfer
libraries share)."""
from ..session import escape_text, naturalsize

__all__ = ["escape_text", "naturalsize", "received_text"]


def received_text(text):
    """A received text as ``wormhole receive`` prints it on stdout: the
    shared ``escape_text`` (so a peer cannot drive the receiver's
    terminal), plus the one thing ``repr()`` also does and the reference's
    stdout therefore shows: ``'`` becomes ``\\'`` when the text holds both
    kinds of quote. The result equals ``repr(text)`` without its quotes."""
    shown = escape_text(text)
    if "'" in text and '"' in text:
        shown = shown.replace("'", "\\'")
    return shown
