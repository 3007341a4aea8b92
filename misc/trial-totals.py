"""Turn trial's closing lines into the plain 'N passed, N failed, N skipped'.

    trial-totals.py LOG RC [LOG RC ...]

Each LOG is one trial run's output and RC its exit status (``./dev test``
runs tests.unit and then the rest of tests, and sums both here). trial
ends with "PASSED (successes=5, skips=1)" or
"FAILED (failures=1, errors=2, successes=40)". CI reads one plain line, so
errors and unexpected successes count as failed, expected failures as
passed. Exits non-zero on any failure, on any run's non-zero exit, when a
run printed no totals, and when no test ran at all.
"""
import re
import sys


def totals(text):
    # the last totals line of the log
    m = None
    for m in re.finditer(r"^(PASSED|FAILED) \(([^)]*)\)\s*$", text, re.M):  # noqa: B007
        pass
    if m is None:
        return None
    counts = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2)))
    passed = counts.get("successes", 0) + counts.get("expectedFailures", 0)
    failed = (counts.get("failures", 0) + counts.get("errors", 0)
              + counts.get("unexpectedSuccesses", 0))
    return passed, failed, counts.get("skips", 0)


def main(*logs_and_codes):
    if not logs_and_codes or len(logs_and_codes) % 2:
        print("usage: trial-totals.py LOG RC [LOG RC ...]", file=sys.stderr)
        return 2
    passed = failed = skipped = 0
    bad_exit = False
    for log_path, trial_rc in zip(logs_and_codes[::2], logs_and_codes[1::2], strict=False):
        with open(log_path, encoding="utf-8", errors="replace") as f:
            result = totals(f.read())
        if result is None:
            # a run that crashed before its totals counts as one failure
            print(f"trial printed no totals line in {log_path}", file=sys.stderr)
            result = (0, 1, 0)
        passed, failed, skipped = (a + b for a, b in
                                   zip((passed, failed, skipped), result, strict=False))
        bad_exit = bad_exit or int(trial_rc) != 0
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line)
    if failed or bad_exit or passed == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
