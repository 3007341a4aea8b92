#!/usr/bin/env python
"""What `./dev demo` runs: a file and a text through the wormhole on this
machine, through OUR servers.

1. start our Mailbox server (`twistd -n wormhole-mailbox`) and our Transit
   relay (`twistd -n transitrelay`) on free 127.0.0.1 ports, their files in
   a temporary directory, and wait until both accept connections;
2. `wormhole send FILE` (a 20 MB file of random bytes) and read the code
   it prints; `wormhole receive --accept-file CODE`, whose progress bar
   is drawn on this terminal; both with --no-listen, so the bytes go
   through our Transit relay;
3. `wormhole send --text ...`, `wormhole receive CODE`;
4. show what the senders printed, check the file's sha256 and the text,
   stop the servers (by the PIDs we started) and exit 0 -- or 1 if
   anything went wrong.

Run it with the project's venv python: the `twistd` and `wormhole` next
to that python are the ones used.
"""
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TEXT = "Hello from the wormhole demo! Grüße ✓"
FILE_SIZE = 20 * 1000 * 1000
BIN = os.path.dirname(os.path.abspath(sys.executable))
START_TIMEOUT = 30.0
TRANSFER_TIMEOUT = 120.0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until_listening(port, server, deadline):
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def start_twistd(tmp, plugin, args=()):
    """Start ``twistd -n PLUGIN``; a few tries in case another process
    takes the free port between our check and twistd's bind."""
    for attempt in range(3):
        port = free_port()
        log = open(os.path.join(tmp, f"{plugin}-{attempt}.log"), "wb")
        server = subprocess.Popen(
            [os.path.join(BIN, "twistd"), "-n",
             "--pidfile", os.path.join(tmp, f"{plugin}.pid"), plugin,
             "--port", f"tcp:{port}:interface=127.0.0.1", *args],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
        if wait_until_listening(port, server, time.monotonic() + START_TIMEOUT):
            return server, port
        stop(server)
        with open(log.name, "rb") as f:
            sys.stderr.write(f.read().decode("utf-8", "replace"))
    raise SystemExit(f"demo: {plugin} did not start")


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def show(title, data):
    print(f"--- {title}")
    sys.stdout.write(data.decode("utf-8", "replace"))
    if data and not data.endswith(b"\n"):
        print()


def start_sender(argv, tmp, name):
    """Start a sender; returns (process, its stderr file, the code)."""
    err = open(os.path.join(tmp, f"{name}.err"), "w+b")
    sender = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=err, cwd=tmp)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and sender.poll() is None:
        time.sleep(0.1)
        err.seek(0)
        m = re.search(rb"Wormhole code is: (\S+)", err.read())
        if m:
            return sender, err, m.group(1).decode("ascii")
    stop(sender)
    err.seek(0)
    show(f"{name} stderr", err.read())
    raise SystemExit(f"demo: FAILED, the {name} printed no code")


def finish(sender, err, name):
    out, _ = sender.communicate(timeout=TRANSFER_TIMEOUT)
    err.seek(0)
    show(f"{name} stdout", out)
    show(f"{name} stderr", err.read())
    return sender.returncode


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def send_file(wormhole, tmp):
    """The file, relay-only: the receiver's progress bar on this terminal."""
    outbox, inbox = os.path.join(tmp, "outbox"), os.path.join(tmp, "inbox")
    os.makedirs(outbox)
    os.makedirs(inbox)
    path = os.path.join(outbox, "demo-file.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(FILE_SIZE))
    sender, err, code = start_sender(wormhole + ["send", "--no-listen", path], tmp,
                                     "file sender")
    print(f"demo: the file sender's code is {code}; receiving (progress below)", flush=True)
    receiver = subprocess.run(wormhole + ["receive", "--no-listen", "--accept-file", code],
                              stdin=subprocess.DEVNULL, cwd=inbox, timeout=TRANSFER_TIMEOUT)
    status = finish(sender, err, "file sender")
    received = os.path.join(inbox, "demo-file.bin")
    ok = (status == 0 and receiver.returncode == 0 and os.path.exists(received)
          and sha256_of(received) == sha256_of(path))
    print("demo: the file arrived, same sha256" if ok else
          f"demo: the file FAILED (sender exit {status}, receiver exit {receiver.returncode})")
    return ok


def send_text(wormhole, tmp):
    sender, err, code = start_sender(wormhole + ["send", "--no-qr", "--text", TEXT], tmp,
                                     "text sender")
    print(f"demo: the text sender's code is {code}")
    receiver = subprocess.run(wormhole + ["receive", code], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=TRANSFER_TIMEOUT)
    status = finish(sender, err, "text sender")
    show("text receiver stdout", receiver.stdout)
    show("text receiver stderr", receiver.stderr)
    ok = (status == 0 and receiver.returncode == 0
          and receiver.stdout == (TEXT + "\n").encode("utf-8"))
    print("demo: the text arrived" if ok else
          f"demo: the text FAILED (sender exit {status}, receiver exit {receiver.returncode})")
    return ok


def main():
    tmp = tempfile.mkdtemp(prefix="wormhole-demo-")
    servers = []
    try:
        mailbox, port = start_twistd(tmp, "wormhole-mailbox",
                                     ["--channel-db", os.path.join(tmp, "channel.sqlite")])
        servers.append(mailbox)
        relay, relay_port = start_twistd(tmp, "transitrelay")
        servers.append(relay)
        url = f"ws://127.0.0.1:{port}/v1"
        transit = f"tcp:127.0.0.1:{relay_port}"
        print(f"demo: our Mailbox server listens at {url} (pid {mailbox.pid}), "
              f"our Transit relay at {transit} (pid {relay.pid})", flush=True)
        wormhole = [os.path.join(BIN, "wormhole"), "--relay-url", url,
                    "--transit-helper", transit]
        ok = send_file(wormhole, tmp)
        ok = send_text(wormhole, tmp) and ok
        print("---")
        print("demo: OK, the file and the text arrived" if ok else "demo: FAILED")
        return 0 if ok else 1
    finally:
        for server in servers:
            stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
