"""--lan against a local Mailbox server on loopback: time from the
receiver having the code to the first byte (results in
docs/performance.md, "On a local network (--lan)").

Builds the local network of tests/lan (network namespaces on a bridge,
multicast on, no way out; needs root, ip(8), iptables(8)). Each round
sends one file with our CLI, for transfer-v2 and for classic (--classic):

- ``lan``: ``send --lan`` on host A, ``receive --lan CODE`` on host B
  (mDNS lookup of the nameplate, the sender's own Mailbox server, a
  direct connection across the bridge);
- ``loopback``: our Mailbox server (``twistd wormhole-mailbox``) on
  127.0.0.1 of host A, sender and receiver both on host A with
  ``--relay-url ws://127.0.0.1:PORT/v1`` and no Transit relay.

  .venv/bin/python bench/lan_bench.py [--rounds 5] [--size-kib 1024]

One machine-readable line per run, then the medians:
  lan mode=lan proto=v2 code_s=... first_byte_s=... wall_s=...
  median mode=lan proto=v2 first_byte_s=... code_s=...

``code_s``: from starting the sender to its code line (the LAN sender
starts its server and probes for a nameplate first); ``first_byte_s``:
from starting the receiver, code in hand, to its path line ("Receiving
(...)": the first byte comes right after it); ``wall_s``: from starting
the receiver to its exit.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from tests.lan._net import Lan  # noqa: E402

from _netns import Cleanups, start_server  # noqa: E402

MAILBOX_PORT = 4000
CODE = re.compile(rb"Wormhole code is: (\S+)")
RECEIVING = re.compile(rb"Receiving \(")
ENV = dict(os.environ, PYTHONUNBUFFERED="1",
           PYTHONPATH=os.path.join(REPO, "src") + os.pathsep + REPO)


def start_mailbox(lan, workdir, procs):
    start_server(lan, "a", "wormhole-mailbox", MAILBOX_PORT, "127.0.0.1", workdir, procs,
                 env=ENV)


def _read_until(stream, regex, seen):
    while True:
        line = stream.readline()
        if not line:
            return None
        seen.append(line)
        m = regex.search(line)
        if m:
            return m


def one_run(lan, workdir, n, mode, proto, src):
    out = os.path.join(workdir, f"out{n}")
    os.makedirs(out)
    cli = [sys.executable, "-m", "wormhole.cli"]
    if mode == "loopback":
        cli += ["--relay-url", f"ws://127.0.0.1:{MAILBOX_PORT}/v1", "--transit-helper", ""]
    lan_flag = ["--lan"] if mode == "lan" else []
    extra = ["--classic"] if proto == "classic" else []
    receiver_host = "b" if mode == "lan" else "a"
    started = time.monotonic()
    send = subprocess.Popen(lan.argv("a", cli + ["send", *lan_flag, "--no-qr", "--hide-progress",
                                                 *extra, os.path.basename(src)]),
                            cwd=os.path.dirname(src), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=ENV)
    said = []
    m = _read_until(send.stderr, CODE, said)
    if m is None:
        raise SystemExit(f"lan_bench: run {n}: no code\n{b''.join(said).decode()}")
    code_at = time.monotonic()
    recv = subprocess.Popen(lan.argv(receiver_host, cli + [
        "receive", *lan_flag, "--hide-progress", "--accept-file", *extra,
        m.group(1).decode()]), cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=ENV)
    heard = []
    first = _read_until(recv.stderr, RECEIVING, heard) and time.monotonic()
    rest = recv.communicate()[1]
    end = time.monotonic()
    send_rest = send.communicate()[1]
    if send.returncode or recv.returncode or not first:
        raise SystemExit(f"lan_bench: run {n} failed\n{b''.join(said).decode()}"
                         f"{send_rest.decode()}\n{b''.join(heard).decode()}{rest.decode()}")
    return {"code_s": code_at - started, "first_byte_s": first - code_at,
            "wall_s": end - code_at}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-kib", type=int, default=1024)
    args = ap.parse_args()
    cleanups, procs = Cleanups(), []
    workdir = tempfile.mkdtemp(prefix="lan-bench-")
    try:
        lan = Lan.build(cleanups)
        start_mailbox(lan, workdir, procs)
        src = os.path.join(workdir, "src", "data.bin")
        os.makedirs(os.path.dirname(src))
        with open(src, "wb") as f:
            f.write(os.urandom(args.size_kib * 1024))
        results, n = {}, 0
        for _ in range(args.rounds):
            for mode in ("lan", "loopback"):
                for proto in ("v2", "classic"):
                    n += 1
                    r = one_run(lan, workdir, n, mode, proto, src)
                    results.setdefault((mode, proto), []).append(r)
                    print(f"lan mode={mode} proto={proto} kib={args.size_kib} "
                          f"code_s={r['code_s']:.2f} first_byte_s={r['first_byte_s']:.2f} "
                          f"wall_s={r['wall_s']:.2f}", flush=True)
        for (mode, proto), rs in sorted(results.items()):
            med = {k: statistics.median(r[k] for r in rs)
                   for k in ("first_byte_s", "code_s", "wall_s")}
            print(f"median mode={mode} proto={proto} first_byte_s={med['first_byte_s']:.2f} "
                  f"code_s={med['code_s']:.2f} wall_s={med['wall_s']:.2f}", flush=True)
    finally:
        cleanups.finish(procs, workdir)


if __name__ == "__main__":
    main()
