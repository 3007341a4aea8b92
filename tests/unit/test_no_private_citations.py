"""Every citation in src/, tests/ and docs/ resolves inside the repository.

The code and the docs cite the public protocol texts by the names
docs/protocols.md gives them (``Dilation protocol, "L4 protocol"``), a
decision as ``P2P-D<section>.<n>`` (docs/p2p-decisions.md), and a habit
or rule of this project as a doc file and its section
(``docs/architecture.md, "Interfaces are checked"``). What a reader of
the repository cannot look up is refused: a numbered spec file of the
project's private notes, an entry of its private issue tracker, and the
private design notes. A public upstream tracker is cited as
``magic-wormhole#311``, which none of these patterns matches.

Only files are read (no process, no network), so this runs under
tests/unit_blocker/.
"""

import re
from pathlib import Path

from twisted.trial import unittest

# the folder holding the ``tests`` package: the repository
ROOT = Path(__file__).resolve().parents[2]
TREES = ("src", "tests", "docs")

# Built from pieces, so that this file holds no match of its own:
# "spec" and a number of the private spec files (0 followed by 0..9);
# "issue" and a number; the name of the private design notes.
_SPEC = "spec" + r" 00[0-9]"
_ISSUE = r"\b" + "issue" + r" [0-9]+"
_DESIGN = "DESIGN" + r"\.md"
# case-insensitive: a citation that starts a sentence, with a capital,
# is the same citation
PRIVATE = re.compile("|".join((_SPEC, _ISSUE, _DESIGN)), re.IGNORECASE)

# folders that are no part of the repository's text: caches and what
# installing, testing and building leave behind (.gitignore)
SKIP_DIRS = ("__pycache__", ".hypothesis", "build", "dist")
SKIP_DIR_SUFFIXES = (".egg-info",)
SKIP_DIR_PREFIXES = ("_trial_temp",)
# files that are not text
BINARY_SUFFIXES = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".ico", ".pdf", ".pyc", ".pyo",
    ".so", ".gz", ".zip", ".whl", ".tar", ".sqlite", ".db", ".cache",
})


def offending_lines(text, name):
    """Return ``["name:line: text", ...]`` for every line of ``text`` that
    cites something outside the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if PRIVATE.search(line):
            found.append(f"{name}:{number}: {line.strip()}")
    return found


def _skipped_dir(part):
    return (part in SKIP_DIRS or part.endswith(SKIP_DIR_SUFFIXES)
            or part.startswith(SKIP_DIR_PREFIXES))


def text_files(root=ROOT, trees=TREES):
    """Every text file under ``trees`` of ``root``, sorted, as paths."""
    for tree in trees:
        for path in sorted((root / tree).rglob("*")):
            relative = path.relative_to(root)
            if any(_skipped_dir(part) for part in relative.parts[:-1]):
                continue
            if not path.is_file() or path.suffix.lower() in BINARY_SUFFIXES:
                continue
            yield path


def offenders(root=ROOT, trees=TREES):
    """Every offending line under ``trees`` of ``root``."""
    found = []
    for path in text_files(root, trees):
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary, whatever its name says
        text = data.decode("utf-8", errors="replace")
        found.extend(offending_lines(text, path.relative_to(root).as_posix()))
    return found


class NoPrivateCitations(unittest.SynchronousTestCase):
    def test_tree(self):
        """No file under src/, tests/ or docs/ cites a private spec file,
        issue or design note; each offending line is listed as
        file:line."""
        found = offenders()
        self.assertEqual(
            found, [],
            "citations a reader of the repository cannot look up (cite "
            "docs/protocols.md's names or a docs/ section instead):\n"
            + "\n".join(found))

    def test_checker_catches_a_planted_line(self):
        """The checker reports a planted citation of each kind, with its
        file and line, and lets the resolvable forms through."""
        planted = "\n".join((
            'Dilation protocol, "L4 protocol": acks are cumulative',
            "see " + "spec" + " 004 5.12 for the format",
            "fixed in " + "Issue" + " 22",
            "as " + "DESIGN" + ".md asks",
            "magic-wormhole#311 and P2P-D7.1 and docs/security.md, "
            '"Dilation" resolve',
            "tissue 5 is not an issue; nor is spec 4",
        ))
        found = offending_lines(planted, "planted.py")
        self.assertEqual([line.split(": ")[0] for line in found],
                         ["planted.py:2", "planted.py:3", "planted.py:4"])

    def test_walk_skips_caches_and_binaries(self):
        """A match inside __pycache__, an egg-info folder or a binary file
        is not the repository's text; one in a plain file is reported."""
        root = Path(self.mktemp())
        bad = ("issue" + " 7\n").encode()
        (root / "src" / "__pycache__").mkdir(parents=True)
        (root / "src" / "x.egg-info").mkdir()
        (root / "src" / "__pycache__" / "m.py").write_bytes(bad)
        (root / "src" / "x.egg-info" / "PKG-INFO").write_bytes(bad)
        (root / "src" / "picture.png").write_bytes(bad)
        (root / "src" / "blob.dat").write_bytes(b"\0" + bad)
        (root / "src" / "module.py").write_bytes(b"ok\n" + bad)
        self.assertEqual(offenders(root, ("src",)),
                         ["src/module.py:2: issue" + " 7"])
