#!/usr/bin/env python
"""What `./dev demo` runs: one text through the wormhole on this machine.

1. start OUR Mailbox server (`twistd -n wormhole-mailbox`) on 127.0.0.1,
   on a free port, with its database in a temporary directory;
2. wait until it accepts connections;
3. `wormhole send --text ...` and read the code it prints;
4. `wormhole receive CODE`;
5. show what both printed, check that the text arrived, stop the server
   (by the PID we started) and exit 0 -- or 1 if anything went wrong.

Run it with the project's venv python: the `twistd` and `wormhole` next
to that python are the ones used.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TEXT = "Hello from the wormhole demo! Grüße ✓"
BIN = os.path.dirname(os.path.abspath(sys.executable))
START_TIMEOUT = 30.0
TRANSFER_TIMEOUT = 60.0


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


def start_server(tmp):
    """Start the server; a few tries in case another process takes the
    free port between our check and twistd's bind."""
    for attempt in range(3):
        port = free_port()
        log = open(os.path.join(tmp, f"server-{attempt}.log"), "wb")
        server = subprocess.Popen(
            [os.path.join(BIN, "twistd"), "-n",
             "--pidfile", os.path.join(tmp, "twistd.pid"),
             "wormhole-mailbox",
             "--port", f"tcp:{port}:interface=127.0.0.1",
             "--channel-db", os.path.join(tmp, "channel.sqlite")],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
        if wait_until_listening(port, server, time.monotonic() + START_TIMEOUT):
            return server, port, log.name
        stop(server)
        with open(log.name, "rb") as f:
            sys.stderr.write(f.read().decode("utf-8", "replace"))
    raise SystemExit("demo: the Mailbox server did not start")


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


def main():
    tmp = tempfile.mkdtemp(prefix="wormhole-demo-")
    server = sender = receiver = None
    try:
        server, port, _ = start_server(tmp)
        url = f"ws://127.0.0.1:{port}/v1"
        print(f"demo: our Mailbox server listens at {url} (pid {server.pid})")
        wormhole = [os.path.join(BIN, "wormhole"), "--relay-url", url]

        send_err = open(os.path.join(tmp, "send.err"), "w+b")
        sender = subprocess.Popen(wormhole + ["send", "--text", TEXT],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=send_err)
        code = None
        deadline = time.monotonic() + START_TIMEOUT
        while code is None and time.monotonic() < deadline and sender.poll() is None:
            time.sleep(0.1)
            send_err.seek(0)
            m = re.search(rb"Wormhole code is: (\S+)", send_err.read())
            code = m and m.group(1).decode("ascii")
        if code is None:
            stop(sender)
            send_err.seek(0)
            show("sender stderr", send_err.read())
            print("demo: FAILED, the sender printed no code")
            return 1
        print(f"demo: the sender's code is {code}")

        receiver = subprocess.run(wormhole + ["receive", code], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=TRANSFER_TIMEOUT)
        send_out, _ = sender.communicate(timeout=TRANSFER_TIMEOUT)
        send_err.seek(0)
        show("sender stdout", send_out)
        show("sender stderr", send_err.read())
        show("receiver stdout", receiver.stdout)
        show("receiver stderr", receiver.stderr)

        ok = (sender.returncode == 0 and receiver.returncode == 0
              and receiver.stdout == (TEXT + "\n").encode("utf-8"))
        print("---")
        if ok:
            print("demo: OK, the text arrived")
            return 0
        print(f"demo: FAILED (sender exit {sender.returncode}, "
              f"receiver exit {receiver.returncode})")
        return 1
    finally:
        if sender is not None:
            stop(sender)
        if server is not None:
            stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
