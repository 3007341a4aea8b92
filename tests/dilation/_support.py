"""Helpers for the Dilation interop tests: the reference peer as a
subprocess of its own venv, stopped by PID."""

import json
import os

from twisted.internet import defer

from .._processes import REPO_ROOT, LineProcess, child_env, reference_bin  # noqa: F401 (REPO_ROOT for the tests)

HERE = os.path.dirname(os.path.abspath(__file__))
REF_PEER = os.path.join(HERE, "ref_peer.py")


def reference_python():
    return reference_bin("python")


class _Peer(LineProcess):
    """The reference peer: one JSON object per stdout line."""

    @defer.inlineCallbacks
    def read(self):
        line = yield self.next_line()
        msg = json.loads(line)
        if "error" in msg:
            raise AssertionError(f"reference peer failed: {msg['error']}; stderr: "
                                 + self.stderr.decode(errors="replace")[-3000:])
        return msg


def spawn_reference_peer(reactor, url, code, relay, no_listen, ping_interval=None):
    proto = _Peer()
    argv = [reference_python(), REF_PEER, url, code, relay, "1" if no_listen else "0"]
    if ping_interval is not None:
        argv.append(str(ping_interval))
    reactor.spawnProcess(proto, argv[0], argv, env=child_env())
    return proto


@defer.inlineCallbacks
def run_cleanups(cleanups, result):
    """Call each cleanup, last first, waiting for each; failures go into
    ``result["cleanup_errors"]`` and the rest still run."""
    for c in reversed(cleanups):
        try:
            yield c()
        except Exception as e:  # noqa: BLE001 -- cleanup goes on; the result says what failed
            result.setdefault("cleanup_errors", []).append(repr(e))
