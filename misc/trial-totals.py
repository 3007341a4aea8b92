"""Turn trial's closing line into the plain 'N passed, N failed, N skipped'.

trial ends with "PASSED (successes=5, skips=1)" or
"FAILED (failures=1, errors=2, successes=40)". CI reads one plain line, so
errors and unexpected successes count as failed, expected failures as
passed. Exits non-zero on any failure, on trial's own non-zero exit, and
when no test ran at all.
"""
import re
import sys


def totals(text):
    m = None
    for m in re.finditer(r"^(PASSED|FAILED) \(([^)]*)\)\s*$", text, re.M):
        pass
    if m is None:
        return None
    counts = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2)))
    passed = counts.get("successes", 0) + counts.get("expectedFailures", 0)
    failed = (counts.get("failures", 0) + counts.get("errors", 0)
              + counts.get("unexpectedSuccesses", 0))
    return passed, failed, counts.get("skips", 0)


def main(log_path, trial_rc):
    with open(log_path, encoding="utf-8", errors="replace") as f:
        result = totals(f.read())
    if result is None:
        print("0 passed, 1 failed")
        print("trial printed no totals line", file=sys.stderr)
        return 1
    passed, failed, skipped = result
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line)
    if failed or int(trial_rc) != 0 or passed == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
