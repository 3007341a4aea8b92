"""Run trial test names and print, as JSON on the last line, each test's
outcome: ``{test id: "OK" | "FAIL" | "ERROR" | "SKIP" | "TODO"}``.

Run with an application's venv python (tests/app/test_magic_folder.py):
``python trial_outcomes.py NAME...``; trial's own report goes to stderr.
"""

import json
import sys

from twisted.trial.reporter import Reporter
from twisted.trial.runner import TestLoader, TrialRunner


def tests_in(suite):
    """The tests of a (nested) suite; a test case is not iterable."""
    try:
        children = iter(suite)
    except TypeError:
        yield suite
        return
    for child in children:
        yield from tests_in(child)


def main(names):
    suite = TestLoader().loadByNames(names, recurse=True)
    outcome = {test.id(): "OK" for test in tests_in(suite)}
    result = TrialRunner(Reporter, stream=sys.stderr).run(suite)
    for kind, found in (("FAIL", result.failures), ("ERROR", result.errors),
                        ("SKIP", result.skips), ("TODO", result.expectedFailures)):
        for test, *_ in found:
            outcome[test.id()] = kind
    print(json.dumps(outcome, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
