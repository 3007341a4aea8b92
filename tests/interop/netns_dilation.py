"""Observe the reference's first Dilation messages (Dilation protocol,
"Connection Layers", L1: the
``dilate-N`` phases through the mailbox), inside a network namespace that
has only loopback.

The reference listens on every interface and advertises every address it
finds once it dilates; our tests may touch 127.0.0.1 only.  So
test_dilation_l1 runs this module under ``unshare -n`` (a fresh namespace:
just ``lo``, brought up first), with the reference mailbox server and the
reference library peer started *inside* it, and our raw peer (rawpeer.py)
as the other side.  The raw peer offers Dilation in its version, answers
the reference's ``please`` with one of its own, and records what the
reference sends, decrypted.  It never opens an L2 connection.

Usage (inside the namespace, cwd = repo root):
    python -m tests.interop.netns_dilation REFERENCE_VENV
Prints one JSON line: {"ok": true, "phases": {"dilate-0": {...}, ...},
"peer_events": [...]} or {"ok": false, "error": ...}.
"""
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

from twisted.internet import defer, task

from .rawpeer import run_raw_peer

APPID = "example.com/interop-dilation"
CODE = "3-dilation-observer"
OUR_SIDE = "0123456789abcdef"   # our Dilation side (16 hex)


def _die_with_parent():
    # runs in the child before exec: if this observer is killed (a test's
    # cleanup), the kernel sends SIGTERM to the children too, so nothing
    # outlives it inside the namespace
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_ref_server(venv, basedir):
    p = subprocess.Popen(
        [os.path.join(venv, "bin", "twistd"), "-n", "--pidfile=",
         "wormhole-mailbox", "--port", "tcp:0:interface=127.0.0.1",
         "--channel-db", os.path.join(basedir, "channel.sqlite")],
        cwd=basedir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent)
    for line in p.stdout:
        m = re.search(rb"\w+ starting on (\d+)", line)
        if m:
            return p, int(m.group(1))
    raise RuntimeError("reference server did not start")


@defer.inlineCallbacks
def observe(reactor, venv):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    basedir = tempfile.mkdtemp()
    server, port = start_ref_server(venv, basedir)
    url = "ws://127.0.0.1:%d/v1" % port
    script = {"relay_url": url, "appid": APPID, "code": CODE,
              "create_kwargs": {"dilation": True},
              "steps": [["versions", None], ["dilate", None],
                        ["sleep", 30]]}
    peer = subprocess.Popen(
        [os.path.join(venv, "bin", "python"),
         os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "ref_peer.py"), json.dumps(script)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent)
    try:
        def on_other(proto, phase, plaintext):
            msg = json.loads(plaintext.decode("utf-8"))
            if phase == "dilate-0" and msg.get("type") == "please":
                proto.encrypt_add("dilate-0", json.dumps(
                    {"type": "please", "side": OUR_SIDE,
                     "use-version": "ged"}).encode("utf-8"))

        def done(r):
            return any(json.loads(v).get("type") == "connection-hints"
                       for v in r.peer_other.values())
        r = yield run_raw_peer(
            reactor, url, APPID, CODE, timeout=25,
            version_extra={"can-dilate": ["ged"],
                           "dilation-abilities": [{"type": "direct-tcp-v1"},
                                                  {"type": "relay-v1"}]},
            on_other=on_other, done_when=done)
        phases = {k: json.loads(v) for k, v in r.peer_other.items()}
        return {"ok": True, "phases": phases, "our_side": OUR_SIDE,
                "peer_version": r.peer_version}
    finally:
        for p in (peer, server):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def main(reactor, venv):
    def report(result):
        print(json.dumps(result, sort_keys=True), flush=True)

    def failed(f):
        report({"ok": False, "error": f.getTraceback()})
    return observe(reactor, venv).addCallbacks(report, failed)


if __name__ == "__main__":
    task.react(main, sys.argv[1:])
