"""How the CLI shows things (settled against the reference 0.24 by
running it; docs/cli.md)."""


def escape_text(text):
    """A received text as ``wormhole receive`` prints it: Python's string
    escapes for every non-printable character (newline, tab, ESC, bidi
    overrides, ...) and the backslash, so a peer cannot drive the
    receiver's terminal. This is ``repr()`` without its quotes, which also
    escapes ``'`` when the text holds both kinds of quote, as the
    reference does."""
    return repr(text)[1:-1]


def naturalsize(n):
    """A size in the style "35 Bytes", "1 Byte", "2.0 kB" (powers of 1000)."""
    if n == 1:
        return "1 Byte"
    if n < 1000:
        return f"{n} Bytes"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB", "PB", "EB", "ZB"):
        value /= 1000.0
        if value < 1000:
            return f"{value:.1f} {unit}"
    return f"{value:.1f} YB"
