#!/usr/bin/env python
"""Record known-answer vectors from the reference implementation.

Run it with the REFERENCE venv's python (it imports magic-wormhole 0.24;
our own code and tests never do):

    .venv-ref/bin/python misc/record-reference-vectors.py \
        > tests/data/reference_vectors.json

It is not run in CI: the JSON it prints is committed, and
tests/unit/crypto/test_vectors.py checks our sans-I/O code against it.

What it records:
- the reference's key derivation, phase keys, SecretBox output (the nonce is
  random there, and recorded inside the ciphertext) and JSON codec;
- whole sessions between two reference wormholes in this process, through a
  reference Mailbox server (a twistd subprocess on 127.0.0.1), with the
  SPAKE2 randomness pinned, so each side's pake body, the shared key, the
  verifier and the version/app phases' bodies and plaintexts are known;
- a transcript between two reference `wormhole` CLI processes (send --text),
  of which only the wire bodies are known.

The server deletes a mailbox's messages when it closes, so a SQLite trigger
installed next to its schema copies every message into `kat_messages`.
"""

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version as dist_version

from twisted.internet import defer, task

import wormhole
import wormhole._key as ref_key
import wormhole.util as ref_util

REF_BIN = os.path.dirname(sys.executable)
APPID = "example.org/wormhole-kat"
CLI_CODE = "7-abc-def"
CLI_TEXT = "hello"


def hx(b):
    return b.hex()


# -- pure functions -------------------------------------------------------

def record_functions():
    keys = [bytes(32), bytes(range(32)), hashlib.sha256(b"kat master key").digest()]
    out = {"derive_key": [], "derive_phase_key": [], "encrypt_data": [], "dict_to_bytes": []}
    for key in keys:
        for purpose, length in [
            (b"wormhole:verifier", 32),
            (b"wormhole:phase:", 32),
            (APPID.encode() + b"/transit-key", 32),
            (b"transit_sender", 32),
            (b"", 16),
            (b"long output", 64),
        ]:
            out["derive_key"].append({
                "key": hx(key), "purpose": hx(purpose), "length": length,
                "out": hx(ref_key.derive_key(key, purpose, length)),
            })
        for side, phase in [("side1", "pake"), ("side1", "version"), ("0123456789abcdef", "0"),
                            ("fedcba9876543210", "17"), ("fedcba9876543210", "dilate-1")]:
            # (the reference encodes side and phase as ASCII and raises on
            # anything else, so there is no non-ASCII answer to record)
            out["derive_phase_key"].append({
                "key": hx(key), "side": side, "phase": phase,
                "out": hx(ref_key.derive_phase_key(key, side, phase)),
            })
        for plaintext in [b"", b"hello", bytes(range(256))]:
            out["encrypt_data"].append({
                "key": hx(key), "plaintext": hx(plaintext),
                "encrypted": hx(ref_key.encrypt_data(key, plaintext)),
            })
    for d in [{}, {"a": 1}, {"offer": {"message": "h\u00e9llo \u2603"}, "n": [1, 2.5, None, True]}]:
        out["dict_to_bytes"].append({"dict": d, "bytes": hx(ref_util.dict_to_bytes(d))})
    return out


# -- the reference Mailbox server ------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_server(tmpdir):
    port = free_port()
    db = os.path.join(tmpdir, "channel.sqlite")
    log_path = os.path.join(tmpdir, "server.log")
    with open(log_path, "wb") as log:  # the child keeps its own copy of the fd
        proc = subprocess.Popen(
            [os.path.join(REF_BIN, "twistd"), "-n", "--pidfile=", "wormhole-mailbox",
             "--port", f"tcp:{port}:interface=127.0.0.1", "--channel-db", db],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmpdir,
        )
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise RuntimeError("mailbox server exited; see " + log_path)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("mailbox server did not listen") from None
            time.sleep(0.2)
    # The server has created its schema before listening: add the trigger.
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE kat_messages AS SELECT * FROM messages WHERE 0;
        CREATE TRIGGER kat_copy AFTER INSERT ON messages BEGIN
          INSERT INTO kat_messages SELECT NEW.app_id, NEW.mailbox_id, NEW.side,
            NEW.phase, NEW.body, NEW.server_rx, NEW.msg_id;
        END;
    """)
    con.commit()
    con.close()
    return proc, port, db


def read_messages(db):
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT app_id, mailbox_id, side, phase, body FROM kat_messages ORDER BY rowid"
    ).fetchall()
    con.execute("DELETE FROM kat_messages")
    con.commit()
    con.close()
    return [{"app_id": a, "mailbox_id": m, "side": s, "phase": p, "body": b}
            for (a, m, s, p, b) in rows]


# -- sessions between two in-process reference wormholes ---------------------

class PinnedEntropy:
    """Replaces the reference's SPAKE2_Symmetric to pin and log its randomness."""

    def __init__(self):
        self.instances = []
        self._real = ref_key.SPAKE2_Symmetric

    def __call__(self, password, *args, **kwargs):
        log = {"password": password.decode("utf-8"), "entropy": [], "start": None}
        n = len(self.instances)
        counter = [0]

        def entropy_f(num_bytes):
            out = b""
            while len(out) < num_bytes:
                out += hashlib.sha256(b"kat entropy %d %d" % (n, counter[0])).digest()
                counter[0] += 1
            out = out[:num_bytes]
            log["entropy"].append(hx(out))
            return out

        kwargs["entropy_f"] = entropy_f
        sp = self._real(password, *args, **kwargs)
        real_start = sp.start

        def start():
            msg = real_start()
            log["start"] = hx(msg)
            return msg

        sp.start = start
        self.instances.append(log)
        return sp


async def one_session(reactor, relay_url, db, pinned, name, code, versions, dilation):
    pinned.instances.clear()
    kw = {"versions": versions}
    if dilation:
        kw["dilation"] = True
    w1 = wormhole.create(APPID, relay_url, reactor, **kw)
    w2 = wormhole.create(APPID, relay_url, reactor, **kw)
    w1.set_code(code)
    w2.set_code(code)
    key1 = await w1.get_unverified_key()
    key2 = await w2.get_unverified_key()
    assert key1 == key2, "reference sides disagree on the key"
    ver1 = await w1.get_verifier()
    ver2 = await w2.get_verifier()
    assert ver1 == ver2
    await w1.get_versions()
    await w2.get_versions()
    w1.send_message(b"app message one")
    w2.send_message(b"app message two")
    assert await w2.get_message() == b"app message one"
    assert await w1.get_message() == b"app message two"
    await w1.close()
    await w2.close()
    messages = read_messages(db)
    for m in messages:
        body = bytes.fromhex(m["body"])
        if m["phase"] == "pake":
            m["plaintext"] = None
        else:
            pk = ref_key.derive_phase_key(key1, m["side"], m["phase"])
            m["plaintext"] = hx(ref_key.decrypt_data(pk, body))
    sides = []
    for inst in pinned.instances:
        body = side = None
        for m in messages:
            if (m["phase"] == "pake"
                    and json.loads(bytes.fromhex(m["body"]))["pake_v1"] == inst["start"]):
                body = m["body"]
                side = m["side"]
        sides.append({"side": side, "password": inst["password"], "entropy": inst["entropy"],
                      "spake2_message": inst["start"], "pake_body": body})
    return {
        "name": name, "appid": APPID, "code": code, "versions": versions,
        "dilation": dilation, "key": hx(key1), "verifier": hx(ver1),
        "sides": sides, "messages": messages,
    }


# -- two reference CLI processes -------------------------------------------

def cli_transcript(relay_url, db, tmpdir):
    wh = os.path.join(REF_BIN, "wormhole")
    env = dict(os.environ, HOME=tmpdir)
    send = subprocess.Popen(
        [wh, "--relay-url", relay_url, "send", "--text", CLI_TEXT, "--code", CLI_CODE],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
    )
    try:
        recv = subprocess.run(
            [wh, "--relay-url", relay_url, "receive", CLI_CODE],
            check=False, capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=60,
        )
        send.wait(timeout=60)
    finally:
        if send.poll() is None:
            send.kill()
            send.wait()
    got = recv.stdout.decode("utf-8").strip()
    assert got == CLI_TEXT, f"receiver printed {got!r}"
    messages = read_messages(db)
    return {"code": CLI_CODE, "text": CLI_TEXT, "app_id": messages[0]["app_id"],
            "messages": messages}


async def record_wire(reactor, tmpdir):
    proc, port, db = start_server(tmpdir)
    try:
        relay_url = f"ws://127.0.0.1:{port}/v1"
        pinned = PinnedEntropy()
        ref_key.SPAKE2_Symmetric = pinned
        try:
            sessions = [
                await one_session(reactor, relay_url, db, pinned, "plain", "4-purple-sausages",
                                  {"app": "kat", "n": 1}, False),
                await one_session(reactor, relay_url, db, pinned, "dilation", "5-h\u00e9llo-code",
                                  {}, True),
            ]
        finally:
            ref_key.SPAKE2_Symmetric = pinned._real
        # blocking is fine here: nothing else runs in this reactor by now
        cli = cli_transcript(relay_url, db, tmpdir)
        return sessions, cli
    finally:
        proc.terminate()
        proc.wait()


def main(reactor):
    tmpdir = tempfile.mkdtemp(prefix="wormhole-kat-")

    async def run():
        out = {
            "comment": "Known answers recorded from the reference implementation by "
                       "misc/record-reference-vectors.py; all binary values are hex.",
            "reference": {d: dist_version(d) for d in
                          ("magic-wormhole", "magic-wormhole-mailbox-server", "spake2", "pynacl")},
        }
        out.update(record_functions())
        sessions, cli = await record_wire(reactor, tmpdir)
        out["sessions"] = sessions
        out["cli_transcript"] = cli
        # no sort_keys: the dict_to_bytes inputs must keep their key order
        json.dump(out, sys.stdout, indent=1, ensure_ascii=True)
        sys.stdout.write("\n")

    d = defer.ensureDeferred(run())
    timeout = reactor.callLater(120, d.cancel)
    d.addBoth(lambda r: (timeout.active() and timeout.cancel(), r)[1])
    return d


if __name__ == "__main__":
    task.react(main)
