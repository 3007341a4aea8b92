"""Read back a QR code the CLI printed: the half-block characters (or
the terminal's colour-coded variant) become an image, which zbar decodes
(pyzbar; libzbar0 is installed by ./dev). A real decoder, so a test fails
if the printed code does not scan."""
import re

# qrcode's print_ascii: each character is two modules, top and bottom
_PLAIN = {"\u00a0": (0, 0), " ": (0, 0), "\u2580": (1, 0), "\u2584": (0, 1),
          "\u2588": (1, 1)}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCALE = 8


def qr_lines(text):
    """The lines of ``text`` that are drawn with block characters."""
    return [_ANSI.sub("", line) for line in text.splitlines()
            if any(ch in line for ch in "\u2580\u2584\u2588")]


def modules(text, inverted=False):
    """The module matrix (1 = dark) of the QR code printed in ``text``;
    ``inverted`` for the terminal variant (light modules drawn)."""
    rows = []
    for line in qr_lines(text):
        top, bottom = [], []
        for ch in line:
            t, b = _PLAIN[ch]
            if inverted:
                t, b = 1 - t, 1 - b
            top.append(t)
            bottom.append(b)
        rows += [top, bottom]
    return rows


def decode(text, inverted=False):
    """The strings zbar finds in the printed QR code."""
    from PIL import Image
    from pyzbar import pyzbar
    rows = modules(text, inverted)
    width = max(len(r) for r in rows)
    quiet = 4  # zbar wants a light margin around the code
    img = Image.new("L", ((width + 2 * quiet) * SCALE, (len(rows) + 2 * quiet) * SCALE), 255)
    for y, row in enumerate(rows):
        for x, dark in enumerate(row):
            if dark:
                img.paste(0, ((x + quiet) * SCALE, (y + quiet) * SCALE,
                              (x + quiet + 1) * SCALE, (y + quiet + 1) * SCALE))
    return [r.data.decode("utf-8") for r in pyzbar.decode(img)]
