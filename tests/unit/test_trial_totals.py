"""misc/trial-totals.py: the one line of totals that ``./dev test`` ends
with, summed over its two trial runs (tests.unit, then the rest)."""

import contextlib
import io

from twisted.trial import unittest

from .._paths import load_script


class Totals(unittest.TestCase):
    def setUp(self):
        self.totals = load_script("trial_totals", "misc", "trial-totals.py")

    def log(self, text):
        path = self.mktemp()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = self.totals.main(*args)
        return rc, out.getvalue()

    def test_two_runs_are_summed(self):
        """Passed, failed and skipped add up over the runs; errors and
        unexpected successes count as failed, expected failures as
        passed; any failure makes the exit non-zero."""
        unit = self.log("...\nPASSED (successes=5, skips=1)\n")
        rest = self.log("FAILED (expectedFailures=2, failures=1, errors=2, "
                        "unexpectedSuccesses=1, successes=40)\n")
        self.assertEqual(self.main(unit, "0", rest, "1"),
                         (1, "47 passed, 4 failed, 1 skipped\n"))
        self.assertEqual(self.main(unit, "0", unit, "0"),
                         (0, "10 passed, 0 failed, 2 skipped\n"))

    def test_a_run_without_totals_or_with_a_bad_exit_fails(self):
        """A run that printed no totals counts as one failure; a non-zero
        exit fails the whole even when its counts are clean."""
        ok = self.log("PASSED (successes=3)\n")
        self.assertEqual(self.main(ok, "0", self.log("Traceback ...\n"), "1"),
                         (1, "3 passed, 1 failed\n"))
        self.assertEqual(self.main(ok, "0", ok, "2"), (1, "6 passed, 0 failed\n"))

    def test_nothing_ran_fails(self):
        self.assertEqual(self.main(self.log("PASSED (successes=0)\n"), "0"),
                         (1, "0 passed, 0 failed\n"))
        self.assertEqual(self.main(), (2, ""))
