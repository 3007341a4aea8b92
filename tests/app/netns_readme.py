"""The README's two library examples, run as written: inside a network
namespace that has only loopback (run by test_readme under ``unshare -n``),
so the Mailbox server can have the README's port 4000, started the way
the README starts it. Each example runs as two processes: the first
prints a code, the second is given it.

Usage (inside the namespace): python -m tests.app.netns_readme WORKDIR
(WORKDIR holds example.py and dilation_example.py). Prints one JSON line
with each process's exit status and output.
"""

import json
import os
import re
import subprocess
import sys
import threading

TIMEOUT = 60


def run_pair(script, cwd):
    first = subprocess.Popen([sys.executable, script], cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        line = first.stdout.readline()  # "code: N-word-word"
        m = re.match(r"code: (\S+)", line)
        if not m:
            first.kill()
            return {"error": f"no code from {script}: {line!r} {first.stderr.read()[-2000:]}"}
        second = subprocess.run([sys.executable, script, m.group(1)], cwd=cwd,
                                capture_output=True, text=True, timeout=TIMEOUT)
        out, err = first.communicate(timeout=TIMEOUT)
    finally:
        if first.poll() is None:
            first.kill()
    return {"first": [first.returncode, line + out, err[-2000:]],
            "second": [second.returncode, second.stdout, second.stderr[-2000:]]}


def main(workdir):
    bindir = os.path.dirname(sys.executable)
    server = subprocess.Popen([os.path.join(bindir, "twistd"), "-n", "--pidfile=",
                               "wormhole-mailbox", "--port", "tcp:4000:interface=127.0.0.1"],
                              cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    # a server that never says it listens is killed, which ends the read
    watchdog = threading.Timer(TIMEOUT, server.kill)
    watchdog.start()
    try:
        for line in server.stdout:  # until twistd says the README's port listens
            if "starting on 4000" in line:
                break
        else:
            print(json.dumps({"error": "the Mailbox server did not start"}))
            return
        watchdog.cancel()
        # keep draining its log so it never blocks on a full pipe
        threading.Thread(target=server.stdout.read, daemon=True).start()
        result = {name: run_pair(name, workdir)
                  for name in ("example.py", "dilation_example.py")}
        print(json.dumps(result))
    finally:
        watchdog.cancel()
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main(sys.argv[1])
