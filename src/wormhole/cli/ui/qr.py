"""The code as a QR code on the sender's terminal (the reference 0.24
draws one by default; docs/cli.md "QR codes and `wormhole-transfer:` URIs"):
the ``wormhole-transfer:`` URI
(``_uri``), drawn by the ``qrcode`` library with half-block characters,
two modules per character row. On a terminal it draws white on black
with colour codes (readable on dark and light themes alike), elsewhere
plain characters, dark modules as filled blocks."""


def draw(uri, out):
    """Write the QR code of ``uri`` to ``out``; nothing when ``out``
    cannot encode the block characters (an ASCII-only stream)."""
    from qrcode import QRCode  # only when a QR code is drawn: CLI start-up stays lean
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        "\u2580\u2584\u2588\u00a0".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    qr = QRCode(border=1)
    qr.add_data(uri)
    isatty = getattr(out, "isatty", lambda: False)()
    qr.print_ascii(out=out, tty=isatty, invert=False)
    return True
