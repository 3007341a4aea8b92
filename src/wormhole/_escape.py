"""Text from a peer or a server, made safe to show on a terminal.

A file name, an error string, a count or a message of the day that came
over the network may hold escape sequences (ESC, CSI), carriage returns,
newlines that forge extra lines, bidi overrides (U+202E) or other
characters a terminal acts on. Everything the command line and the
library show that did not come from us goes through ``escape_text``
(docs/security.md, "What reaches the terminal").
"""


def _escape_char(c):
    # Python's own escape for that one character: \n, \x1b, \u202e, \\ ...
    return repr(c)[1:-1]


def escape_text(text):
    """``text`` with every non-printable character (``str.isprintable``:
    controls, separators other than the space, format characters such as
    bidi overrides, unassigned code points) and the backslash written as
    its Python escape, so the result is one line that shows exactly what
    was received and drives nothing. Printable non-ASCII passes unchanged.

    Anything that is not a ``str`` (a number, a list from a JSON message)
    is shown by its ``str()``, escaped the same way."""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(c if c.isprintable() and c != "\\" else _escape_char(c)
                   for c in text)


# how much of one peer-supplied value an error message quotes
EXCERPT = 200


def excerpt(value, limit=EXCERPT):
    """``str(value)``, cut to ``limit`` characters (with "...") so that a
    peer cannot fill a terminal or a log with one error string. Escaping
    still happens where the text is shown."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
