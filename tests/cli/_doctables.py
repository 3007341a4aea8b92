"""Read the "Exit status" and "Messages" tables of docs/cli.md ("## Errors")
and turn a documented message into a pattern (support for
tests/cli/test_documented_*.py; never a test module itself).

A message cell quotes what the CLI prints between backticks and comments
around them: each backticked part is one documented message (a row may
give several: `A` / `B`, or a list). In a message, capitals that name a
value (N, M, REASON, NAME, URL, PATH, ...) and ``...`` stand for any
text, and a number stands for any number (the docs give examples: "4.2
MB of 8.0 MB", or the default of a timer a test shortens); everything
else is literal.
"""
import os
import re

from ._support import REPO

DOC = os.path.join(REPO, "docs", "cli.md")
SECTION = "## Errors"
EXIT_STATUS = "### Exit status"
MESSAGES = "### Messages"

# the names docs/cli.md uses for a value in a message
PLACEHOLDERS = ("NOSUCHFILE", "REASON", "FOLDER", "NAME", "PATH", "HOST", "PORT", "HINT",
                "URL", "N", "M", "X")
_TOKEN = re.compile(r"\.\.\.|\d+(?:\.\d+)?|\b(?:" + "|".join(PLACEHOLDERS) + r")\b")


class DocTableError(Exception):
    """docs/cli.md does not have the table where the tests expect it."""


def _section(lines, heading, start=0, end=None):
    """The lines under ``heading`` (exact), up to the next heading of the
    same or a higher level."""
    end = len(lines) if end is None else end
    level = len(heading.split(" ", 1)[0])
    for i in range(start, end):
        if lines[i].rstrip() == heading:
            for j in range(i + 1, end):
                mark = lines[j].split(" ", 1)[0]
                if mark and set(mark) == {"#"} and len(mark) <= level:
                    return i + 1, j
            return i + 1, end
    raise DocTableError(f"no heading {heading!r} in docs/cli.md")


def split_row(line):
    """The cells of a Markdown table row (``\\|`` is a literal bar)."""
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        raise DocTableError(f"not a table row: {line!r}")
    cells = re.split(r"(?<!\\)\|", line[1:-1])
    return [c.strip().replace("\\|", "|") for c in cells]


def first_table(lines):
    """(header cells, rows) of the first table in ``lines``."""
    rows = []
    for line in lines:
        if line.lstrip().startswith("|"):
            rows.append(split_row(line))
        elif rows:
            break
    if len(rows) < 2 or not all(set(c) <= set("-: ") for c in rows[1]):
        raise DocTableError("no Markdown table (header, rule, rows) found")
    header, body = rows[0], rows[2:]
    for row in body:
        if len(row) != len(header):
            raise DocTableError(f"row {row!r} has {len(row)} cells, the header {len(header)}")
    return header, body


def read_tables(text):
    """{"Exit status": [(status, meaning)], "Messages": [(situation,
    message)]} from the text of docs/cli.md."""
    lines = text.splitlines()
    start, end = _section(lines, SECTION)
    tables = {}
    for heading, header in ((EXIT_STATUS, ["status", "meaning"]),
                            (MESSAGES, ["situation", "message"])):
        s, e = _section(lines, heading, start, end)
        got, rows = first_table(lines[s:e])
        if got != header:
            raise DocTableError(f"{heading}: header {got!r}, expected {header!r}")
        keys = [row[0] for row in rows]
        if len(set(keys)) != len(keys):
            raise DocTableError(f"{heading}: a first cell appears twice")
        tables[heading.split(" ", 1)[1]] = [tuple(row) for row in rows]
    return tables


def doc_tables():
    with open(DOC, encoding="utf-8") as f:
        return read_tables(f.read())


def quoted(cell):
    """The backticked parts of a cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def pattern(message):
    """A regex (a str) for a documented message: placeholders, ``...`` and
    numbers match any text (numbers: any number), the rest is literal."""
    out, pos = [], 0
    for m in _TOKEN.finditer(message):
        out.append(re.escape(message[pos:m.start()]))
        token = m.group()
        out.append(r"\d+(?:\.\d+)?" if token[0].isdigit() else ".+?")
        pos = m.end()
    out.append(re.escape(message[pos:]))
    return "".join(out)


def documented_status(cell, default=1):
    """The exit status a message cell names ("(exit 3)", "(both exit 3)"),
    else ``default`` (docs/cli.md: every other failure exits 1)."""
    found = set(re.findall(r"\bexit (\d+)\b", cell))
    if len(found) > 1:
        raise DocTableError(f"several exit statuses in {cell!r}")
    return int(found.pop()) if found else default
