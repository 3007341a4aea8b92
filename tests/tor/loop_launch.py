"""Run ``tests.tor.test_e2e.RealTor.test_launch`` (``--launch-tor`` on a
private Tor network, real tor) N times in a row, each in a fresh trial
process (a fresh network, as in a fresh CI run), and stop at the first
failure (it must pass 20 runs in a row; docs/tor.md, "Tests (`tests/unit/tor/`,
`tests/tor/`)").

    .venv/bin/python -m tests.tor.loop_launch [RUNS] [LOG]

Needs root (the Tor tests enter a network namespace). One line per run
goes to stdout and to LOG (default ``tor-launch-loop.log``); a failed
run's whole trial output is appended to LOG. Exit status 0 when every
run passed. Each run takes the network's bootstrap (10-40 s here) plus
the launch; run it when the machine is otherwise quiet.
"""
import subprocess
import sys
import tempfile
import time

TEST = "tests.tor.test_e2e.RealTor.test_launch"
PER_RUN_TIMEOUT = 600


def main(argv):
    runs = int(argv[1]) if len(argv) > 1 else 20
    log_path = argv[2] if len(argv) > 2 else "tor-launch-loop.log"
    with open(log_path, "a") as log:
        def say(line):
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()
        say(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {TEST}, {runs} runs")
        for run in range(1, runs + 1):
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="tor-loop-") as temp:
                try:
                    done = subprocess.run(
                        [sys.executable, "-m", "twisted.trial", "--temp-directory",
                         f"{temp}/_trial_temp", TEST],
                        capture_output=True, text=True, timeout=PER_RUN_TIMEOUT)
                    output, passed = done.stdout + done.stderr, done.returncode == 0
                except subprocess.TimeoutExpired as e:  # the child is killed
                    output, passed = f"timed out after {PER_RUN_TIMEOUT} s: {e}", False
            took = time.monotonic() - started
            say(f"run {run}/{runs}: {'PASSED' if passed else 'FAILED'} in {took:.1f} s")
            if not passed:
                log.write(output + "\n")
                say(f"stopped: run {run} failed (its output is in {log_path})")
                return 1
        say(f"all {runs} runs passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
