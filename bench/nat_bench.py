"""NAT hole punching against the relay (results in docs/performance.md,
"NAT hole punching").

Builds the small internet of tests/nat (network namespaces, iptables
NATs; needs root, ip(8), iptables(8), tc(8)): our Mailbox server and
Transit relay on the public segment, whose link out of the relay is
limited with tc (``--relay-mbit``, standing in for a shared public relay),
and two hosts behind NATs (``--nat-a``/``--nat-b``, default both
port-restricted). Each round sends one file from host A to host B with our
CLI, with punching and with ``--no-punch``, for transfer-v2 (Dilation) and
for classic Transit (``--classic``).

  .venv/bin/python bench/nat_bench.py [--size-mib 32] [--rounds 2]
        [--relay-mbit 40] [--nat-a port-restricted] [--nat-b port-restricted]

One machine-readable line per run, then the ratios of the medians:
  nat proto=v2 punch=on path=direct ttfb_s=... wall_s=... mib_per_s=...
  ratio proto=v2 punch/no-punch mib_per_s=... ttfb_s=...

``ttfb_s``: from starting both CLIs to the sender's path line (the first
byte goes right after it); ``mib_per_s``: the file's size over the time
from that line to the sender's exit.
"""
import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tests.nat._net import KINDS, PUBLIC, Internet  # noqa: E402

from _netns import Cleanups, start_server  # noqa: E402

MAILBOX_PORT, RELAY_PORT = 4000, 4001
PATH_LINE = re.compile(rb"Sending \((.*)\)\.\.")


def start_servers(net, workdir, procs):
    for plugin, port in (("wormhole-mailbox", MAILBOX_PORT), ("transitrelay", RELAY_PORT)):
        start_server(net, "pub", plugin, port, PUBLIC, workdir, procs)


def one_run(net, workdir, n, proto, punch, src, digest):
    code = f"{n}-nat-bench"
    out = os.path.join(workdir, f"out{n}")
    os.makedirs(out)
    cli = [sys.executable, "-m", "wormhole.cli", "--relay-url",
           f"ws://{PUBLIC}:{MAILBOX_PORT}/v1", "--transit-helper", f"tcp:{PUBLIC}:{RELAY_PORT}"]
    if not punch:
        cli.append("--no-punch")
    extra = ["--classic"] if proto == "classic" else []
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    start = time.monotonic()
    send = subprocess.Popen(net.argv("a", cli + ["send", "--hide-progress", "--code", code,
                                                 *extra, os.path.basename(src)]),
                            cwd=os.path.dirname(src), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    recv = subprocess.Popen(net.argv("b", cli + ["receive", "--hide-progress", "--accept-file",
                                                 *extra, code]),
                            cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    stderr, first = b"", None
    while True:
        line = send.stderr.readline()
        if not line:
            break
        stderr += line
        if first is None and PATH_LINE.search(line):
            first = time.monotonic()
    send.wait()
    end = time.monotonic()
    recv_err = recv.communicate()[1]
    if send.returncode or recv.returncode or first is None:
        raise SystemExit(f"nat_bench: run {n} failed\n{stderr.decode()}\n{recv_err.decode()}")
    with open(os.path.join(out, os.path.basename(src)), "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != digest:
            raise SystemExit(f"nat_bench: run {n}: the received file differs")
    path = PATH_LINE.search(stderr).group(1).decode()
    size_mib = os.path.getsize(src) / 2**20
    return {"path": "relay" if "relay" in path else "direct",
            "ttfb_s": first - start, "wall_s": end - start,
            "mib_per_s": size_mib / max(end - first, 1e-6)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mib", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--relay-mbit", type=int, default=40)
    ap.add_argument("--nat-a", choices=KINDS, default="port-restricted")
    ap.add_argument("--nat-b", choices=KINDS, default="port-restricted")
    args = ap.parse_args()
    cleanups, procs = Cleanups(), []
    workdir = tempfile.mkdtemp(prefix="nat-bench-")
    try:
        net = Internet.build(cleanups, args.nat_a, args.nat_b)
        # the relay's link out: the public host's own transmissions on the
        # bridge (bridged traffic between the routers leaves by the ports)
        net.sh("pub", f"tc qdisc add dev br0 root tbf rate {args.relay_mbit}mbit "
               "burst 64kb latency 200ms")
        start_servers(net, workdir, procs)
        src = os.path.join(workdir, "src", "data.bin")
        os.makedirs(os.path.dirname(src))
        with open(src, "wb") as f:
            f.write(os.urandom(args.size_mib * 2**20))
        with open(src, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        results, n = {}, 0
        for _ in range(args.rounds):
            for proto in ("v2", "classic"):
                for punch in (True, False):
                    n += 1
                    r = one_run(net, workdir, n, proto, punch, src, digest)
                    results.setdefault((proto, punch), []).append(r)
                    print(f"nat proto={proto} punch={'on' if punch else 'off'} "
                          f"nat_a={args.nat_a} nat_b={args.nat_b} mib={args.size_mib} "
                          f"relay_mbit={args.relay_mbit} path={r['path']} "
                          f"ttfb_s={r['ttfb_s']:.2f} wall_s={r['wall_s']:.2f} "
                          f"mib_per_s={r['mib_per_s']:.2f}", flush=True)
        for proto in ("v2", "classic"):
            on, off = results[(proto, True)], results[(proto, False)]

            def med(rs, k):
                return statistics.median(r[k] for r in rs)
            print(f"ratio proto={proto} punch/no-punch "
                  f"mib_per_s={med(on, 'mib_per_s') / med(off, 'mib_per_s'):.2f} "
                  f"ttfb_s={med(on, 'ttfb_s') / med(off, 'ttfb_s'):.2f}", flush=True)
    finally:
        cleanups.finish(procs, workdir)


if __name__ == "__main__":
    main()
