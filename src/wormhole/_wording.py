"""How sizes and a peer that left mid-transfer are said: the same words
in both transfer protocols' libraries (``transfer``, ``transfer_v2``) and
the CLI (settled against the reference 0.24's output, docs/cli.md)."""


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


def size_of(done, total):
    """"4.2 MB of 8.0 MB"."""
    return f"{naturalsize(done)} of {naturalsize(total)}"


def peer_left(who, done, total, how="closed the connection"):
    """A peer gone mid-transfer, in one line: "the receiver closed the
    connection after 4.2 MB of 8.0 MB were sent" (``who``: "receiver" on
    the sending side, "sender" on the receiving side)."""
    moved = "were sent" if who == "receiver" else "arrived"
    return f"the {who} {how} after {size_of(done, total)} {moved}"
