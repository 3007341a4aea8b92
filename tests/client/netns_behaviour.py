"""Run tests/client/behaviour_scenarios.py on our library and on the
reference 0.24, against one Mailbox server of ours, inside a network
namespace that has only loopback (run by test_behaviour_vs_reference
under ``unshare -n``: the reference's Dilation listens on every address
and advertises them all, which here are 127.0.0.1 only).

Usage (inside the namespace):
    python -m tests.client.netns_behaviour REFERENCE_PYTHON [SCENARIO...]
Prints one JSON line: {"ours": {...}, "reference": {...}}, each the
scenario script's output, or {"failed": stderr} when it did not finish.
"""

import json
import os
import sys

from twisted.internet import defer, task
from twisted.internet.utils import getProcessOutputAndValue

from tests._ourmailbox import start_mailbox_server
from tests._processes import child_env

SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "behaviour_scenarios.py")


@defer.inlineCallbacks
def run_scenarios(reactor, python, url, only):
    # the script's directory is its sys.path[0], never the repository: the
    # reference's python must import the reference's wormhole
    out, err, code = yield getProcessOutputAndValue(
        python, [SCENARIOS, url] + list(only), env=child_env(), path="/", reactor=reactor)
    lines = out.decode(errors="replace").strip().splitlines()
    if code != 0 or not lines:
        return {"failed": err.decode(errors="replace")[-3000:]}
    return json.loads(lines[-1])


@defer.inlineCallbacks
def main(reactor, reference_python, *only):
    srv = yield start_mailbox_server(reactor)
    try:
        result = {"reference": (yield run_scenarios(reactor, reference_python, srv.url, only)),
                  "ours": (yield run_scenarios(reactor, sys.executable, srv.url, only))}
    finally:
        yield srv.stop()
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    task.react(main, sys.argv[1:])
