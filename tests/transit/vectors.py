"""Record Transit known-answer vectors from the reference 0.24, on the wire.

Run as ``.venv/bin/python -m tests.transit.vectors [--write]`` from the repo
root. The reference Transit (tests/transit/ref_transit.py, in its own venv)
dials plain sockets opened here, and we write down exactly what it sends.
Nothing of ours computes these bytes: the receiver's handshake we answer the
reference sender with was itself captured from a reference receiver, so the
vectors are pure reference output. ``--write`` stores them in
tests/data/transit_vectors.json; without it they go to stdout (the live test
compares both).
"""

import json
import os
import socket
import struct
import subprocess
import sys

from ._support import REF_TRANSIT, REPO_ROOT, child_env, reference_bin

VECTORS = os.path.join(REPO_ROOT, "tests", "data", "transit_vectors.json")
KEY = bytes(range(32))
PLAINTEXTS = [b"first record", b"second record, a little longer"]
TIMEOUT = 30


class _Ref:
    def __init__(self, role, relay="-"):
        self.p = subprocess.Popen(
            [reference_bin("python"), REF_TRANSIT, role, relay, "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env())
        self.hints = self.read()["hints"]

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError("the reference transit exited early")
        msg = json.loads(line)
        if "error" in msg:
            raise AssertionError(f"reference transit: {msg['error']}")
        return msg

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj).encode() + b"\n")
        self.p.stdin.flush()

    def stop(self):
        self.p.kill()
        self.p.wait()


def _listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    s.settimeout(TIMEOUT)
    return s, s.getsockname()[1]


def _read_exact(c, n):
    got = b""
    while len(got) < n:
        chunk = c.recv(n - len(got))
        if not chunk:
            raise AssertionError(f"connection closed after {got!r}")
        got += chunk
    return got


def _read_until(c, end):
    got = b""
    while not got.endswith(end):
        chunk = c.recv(1)
        if not chunk:
            raise AssertionError(f"connection closed after {got!r}")
        got += chunk
    return got


def _read_frame(c):
    (length,) = struct.unpack(">L", _read_exact(c, 4))
    return struct.pack(">L", length) + _read_exact(c, length)


def _direct_hint(port):
    return {"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": port, "priority": 0.0}


def _handshake_of(role):
    """What a reference ``role`` writes first on a direct connection."""
    s, port = _listener()
    ref = _Ref(role)
    try:
        ref.send({"hints": [_direct_hint(port)], "key": KEY.hex()})
        c, _ = s.accept()
        c.settimeout(TIMEOUT)
        return _read_until(c, b"\n\n")
    finally:
        ref.stop()
        s.close()


def _records_of(role, their_handshake):
    """Answer a reference ``role`` with the other handshake (and ``go`` for
    a receiver), then capture what it writes and the records it sends."""
    s, port = _listener()
    ref = _Ref(role)
    try:
        ref.send({"hints": [_direct_hint(port)], "key": KEY.hex()})
        c, _ = s.accept()
        c.settimeout(TIMEOUT)
        handshake = _read_until(c, b"\n\n")
        c.sendall(their_handshake)
        go = b""
        if role == "sender":
            go = _read_exact(c, 3)
        else:
            c.sendall(b"go\n")
        ref.read()  # {"connecting": true}
        ref.read()  # {"connected": true}
        frames = []
        for p in PLAINTEXTS:
            ref.send({"send": p.hex()})
            frames.append(_read_frame(c))
        c.close()
        return handshake, go, frames
    finally:
        ref.stop()
        s.close()


def _relay_line():
    s, port = _listener()
    ref = _Ref("sender", relay=f"tcp:127.0.0.1:{port}")
    try:
        ref.send({"hints": [], "key": KEY.hex()})
        c, _ = s.accept()
        c.settimeout(TIMEOUT)
        return _read_until(c, b"\n")
    finally:
        ref.stop()
        s.close()


def record():
    sender_hs = _handshake_of("sender")
    receiver_hs = _handshake_of("receiver")
    hs_s, go, sender_frames = _records_of("sender", receiver_hs)
    hs_r, _, receiver_frames = _records_of("receiver", sender_hs)
    assert hs_s == sender_hs and hs_r == receiver_hs, "handshakes changed between runs"
    relay = _relay_line().decode("ascii")
    words = relay.rstrip("\n").split(" ")
    token, side = words[2], words[5]
    template = " ".join(words[:2] + ["{token}"] + words[3:5] + ["{side}"]) + "\n"
    return {
        "comment": "recorded from the reference magic-wormhole 0.24 Transit "
                   "on the wire by tests/transit/vectors.py",
        "key": KEY.hex(),
        "sender_handshake": sender_hs.decode("ascii"),
        "receiver_handshake": receiver_hs.decode("ascii"),
        "go": go.decode("ascii"),
        "relay_line_template": template,
        "relay_token": token,
        "relay_side_example": side,
        "records": (
            [{"from": "sender", "counter": i, "plaintext": p.hex(), "frame": f.hex()}
             for i, (p, f) in enumerate(zip(PLAINTEXTS, sender_frames, strict=False))]
            + [{"from": "receiver", "counter": i, "plaintext": p.hex(), "frame": f.hex()}
               for i, (p, f) in enumerate(zip(PLAINTEXTS, receiver_frames, strict=False))]),
    }


def main():
    vectors = record()
    text = json.dumps(vectors, indent=1, sort_keys=True) + "\n"
    if "--write" in sys.argv:
        with open(VECTORS, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
