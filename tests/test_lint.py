"""The pinned linter over the repository's Python: ``python -m ruff check``
with the rules chosen in pyproject.toml (``[tool.ruff]``: pyflakes,
pycodestyle, import order, bugbear; 100 columns) reports nothing.

ruff is pinned in pyproject.toml's ``lint`` extra (part of ``test``), so
a new ruff release cannot turn the suite red by itself; an exception to a
rule is written where it applies, as ``# noqa: CODE  reason``.
"""

import re
import subprocess
import sys
from pathlib import Path

from twisted.trial import unittest

REPO = Path(__file__).resolve().parent.parent
# every directory of Python the repository keeps (docs: the site's conf.py)
CHECKED = ("src", "tests", "misc", "bench", "docs")


class Ruff(unittest.TestCase):
    def test_reports_nothing(self):
        """ruff check over src, tests, misc and bench exits 0; a failure
        shows its findings, one per line."""
        run = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--no-cache",
             "--output-format", "concise", *CHECKED],
            cwd=REPO, capture_output=True, text=True, timeout=300)
        if "No module named ruff" in run.stderr:
            self.fail("ruff is not installed: pip install -e '.[lint]' "
                      "(./dev test installs the test extra, which includes it)")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_the_pin_is_the_one_running(self):
        """The ruff that runs is the version pinned in pyproject.toml."""
        pin = _pinned_ruff()
        run = subprocess.run([sys.executable, "-m", "ruff", "--version"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.stdout.split(), ["ruff", pin], run.stderr)


def _pinned_ruff():
    """The version after ``ruff==`` in pyproject.toml's lint extra (its
    only mention there)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    [pin] = re.findall(r'^lint = \["ruff==([^"]+)"\]$', text, re.M)
    return pin
