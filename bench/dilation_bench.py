"""Dilation throughput, CPU and memory: ours and the reference 0.24 side by
side in one run (results in docs/performance.md, "Dilation").

Each scenario runs a receiving and a sending process (bench/dilation_peer.py
under our venv's or the reference venv's Python) through our Mailbox
server (and our Transit relay for relay-only), in a loopback-only network
namespace (re-executes itself under ``unshare -n``; needs root), because the
reference listens on and advertises every local address.

  .venv/bin/python bench/dilation_bench.py [--size-mib 1024] [--rounds 1] [--markdown] [--floor]

``--floor`` measures what Dilation's one subchannel cannot do without on
this machine (ChaCha20-Poly1305 sealing on the sender, opening on the
receiver, for every 64 KiB record, and loopback TCP's copies, in this
process, bench/_floor.py) and prints the highest throughput any
implementation could reach with each side on a core of its own, and its
ratio to the reference's measured one-direct throughput.

One machine-readable line per figure:
  dilation impl=ours scenario=one-direct mib=1024 mib_per_s=... send_cpu_s_per_gib=...
        recv_cpu_s_per_gib=... send_rss_mib=... recv_rss_mib=... send_sys_s_per_gib=...
        recv_sys_s_per_gib=... (the system part of the CPU)
        send_kfaults_per_gib=... recv_kfaults_per_gib=... (minor page faults,
        thousands: fresh buffers the allocator took from the kernel)
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floor  # noqa: E402
import _netns  # noqa: E402
from _ports import wait_listening  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(REPO, "bench", "dilation_peer.py")
PYTHONS = {"ours": os.path.join(REPO, ".venv", "bin", "python"),
           "ref": os.path.join(os.environ.get("WORMHOLE_REFERENCE_VENV")
                               or os.path.join(REPO, ".venv-ref"), "bin", "python")}
SCENARIOS = [("one-direct", 1, False), ("eight-direct", 8, False), ("one-relay", 1, True)]


def child_env(impl):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")
           and (impl == "ours" or not k.startswith("DILATION_PEER_PROFILE"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_servers(with_relay):
    """Our Mailbox server (and relay) as twistd processes on 127.0.0.1."""
    import socket
    procs, ports = [], {}
    twistd = os.path.join(REPO, ".venv", "bin", "twistd")
    for name in (["mailbox", "relay"] if with_relay else ["mailbox"]):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if name == "mailbox":
            args = ["wormhole-mailbox", f"--port=tcp:{port}:interface=127.0.0.1",
                    f"--channel-db=/tmp/dilbench-{port}.sqlite"]
        else:
            args = ["transitrelay", f"--port=tcp:{port}:interface=127.0.0.1"]
        p = subprocess.Popen([twistd, "-n", "--pidfile=", "--logfile=/dev/null"] + args,
                             cwd="/tmp", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(p)
        ports[name] = port
        wait_listening(port, p, name, tries=200)
    return procs, ports


def start_cut_proxy(relay_port, count, interval):
    p = subprocess.Popen([PYTHONS["ours"], os.path.join(REPO, "bench", "dilation_cut_proxy.py"),
                          str(relay_port), str(count), str(interval)],
                         stdout=subprocess.PIPE, env=child_env("ours"))
    port = json.loads(p.stdout.readline())["port"]
    return p, port


def recovery_times(proxy, gaps):
    """For each cut: seconds from the cut to the first byte after it."""
    proxy.terminate()
    lines = [json.loads(line) for line in proxy.stdout.read().splitlines() if line.strip()]
    cuts = [m["cut"] for m in lines]
    # a cut only counts if data was flowing through the proxy
    print(f"# proxy bytes at each cut: {[m['bytes_so_far'] for m in lines]}", flush=True)
    proxy.wait()
    out = []
    for c in cuts:
        # the first stall that began around the cut (data already in the
        # receiver's buffers may still trickle in for a moment after it)
        after = [end for start, end in gaps if end > c and start <= c + 0.1]
        if after:
            out.append(min(after) - c)
    return out


def run_pair(impl, url, size, nsub, relay, no_listen):
    py = PYTHONS[impl]
    common = [url, str(size), str(nsub), relay or "-", "1" if no_listen else "0"]
    recv = subprocess.Popen([py, PEER, "recv"] + common, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env(impl))
    try:
        code = json.loads(recv.stdout.readline())["code"]
        send = subprocess.Popen([py, PEER, "send"] + common + [code], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env(impl))
        try:
            s_out, s_err = send.communicate(timeout=900)
            r_line = recv.stdout.readline()
            recv.wait(timeout=60)
        finally:
            if send.poll() is None:
                send.kill()
        if not r_line or not s_out.strip():
            raise SystemExit(f"{impl} peers failed:\nsend: {s_err.decode()[-2000:]}\n"
                             f"recv: {recv.stderr.read().decode()[-2000:]}")
        s = json.loads(s_out.decode().strip().splitlines()[-1])
        r = json.loads(r_line)
        if os.environ.get("DILATION_PEER_TIMELINE"):
            recv.wait(timeout=60)
            print(s_err.decode() + recv.stderr.read().decode(), file=sys.stderr)
    finally:
        if recv.poll() is None:
            recv.kill()
    if r["bytes"] != size:
        raise SystemExit(f"{impl}: received {r['bytes']} of {size} bytes")
    secs = r["t_end"] - s["t_start"]
    gib = size / 2 ** 30
    return {"gaps": r.get("gaps", []), "mib_per_s": size / 2 ** 20 / secs, "seconds": secs,
            "send_cpu_s_per_gib": s["cpu_s"] / gib, "recv_cpu_s_per_gib": r["cpu_s"] / gib,
            "send_rss_mib": s["rss_kib"] / 1024, "recv_rss_mib": r["rss_kib"] / 1024,
            "send_sys_s_per_gib": s["sys_s"] / gib, "recv_sys_s_per_gib": r["sys_s"] / gib,
            "send_kfaults_per_gib": s["minflt"] / 1000 / gib,
            "recv_kfaults_per_gib": r["minflt"] / 1000 / gib}


def print_floor(ref):
    seal, open_ = _floor.chacha20poly1305()
    total = 512 * 2 ** 20
    tcp = _floor.loopback_tcp_per_gib()
    send = _floor.per_gib(seal, _floor.memory_chunks(), total) + tcp / 2
    recv = _floor.per_gib(lambda _c: open_(), _floor.memory_chunks(), total) + tcp / 2
    ceiling = 1024 / max(send, recv)
    line = (f"floor send_cpu_s_per_gib={send:.2f} recv_cpu_s_per_gib={recv:.2f} "
            f"(of which loopback TCP {tcp / 2:.2f} each) ceiling_mib_per_s={ceiling:.0f}")
    if ref is not None:
        line += f" ceiling_ratio_to_ref={ceiling / ref['mib_per_s']:.2f}"
    print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--impls", default="ours,ref")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cuts", type=int, default=0,
                    help="also measure recovery after this many cuts (relay-only, via a proxy)")
    ap.add_argument("--scenarios", default=",".join(n for n, _, _ in SCENARIOS))
    ap.add_argument("--floor", action="store_true",
                    help="the least CPU per GiB each side needs, and the ceiling it sets")
    args = ap.parse_args()
    _netns.reexec_in_namespace(__file__, "DILATION_BENCH_NETNS")
    size = args.size_mib * 2 ** 20
    procs, ports = start_servers(with_relay=True)
    url = f"ws://127.0.0.1:{ports['mailbox']}/v1"
    relay = f"tcp:127.0.0.1:{ports['relay']}"
    results = {}
    try:
        for name, nsub, use_relay in [sc for sc in SCENARIOS
                                      if sc[0] in args.scenarios.split(",")]:
            for impl in args.impls.split(","):
                best = None
                for _ in range(args.rounds):
                    r = run_pair(impl, url, size, nsub, relay if use_relay else None, use_relay)
                    if best is None or r["mib_per_s"] > best["mib_per_s"]:
                        best = r
                best.pop("gaps")
                results[(name, impl)] = best
                print(f"dilation impl={impl} scenario={name} mib={args.size_mib} "
                      + " ".join(f"{k}={v:.2f}" for k, v in best.items()), flush=True)
        if args.cuts:
            # relay-only through a proxy that cuts every connection
            # args.cuts times: how long until data flows again
            for impl in args.impls.split(","):
                proxy, pport = start_cut_proxy(ports["relay"], args.cuts, 1.0)
                try:
                    r = run_pair(impl, url, size, 1, f"tcp:127.0.0.1:{pport}", True)
                finally:
                    rec = recovery_times(proxy, r["gaps"] if "r" in dir() else [])
                rec.sort()
                med = rec[len(rec) // 2] if rec else float("nan")
                print(f"dilation impl={impl} scenario=cuts cuts={len(rec)} "
                      f"recovery_median_s={med:.3f} "
                      f"recovery_max_s={max(rec or [float('nan')]):.3f}",
                      flush=True)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
    if args.floor:
        print_floor(results.get(("one-direct", "ref")))
    if args.markdown:
        keys = ["mib_per_s", "send_cpu_s_per_gib", "recv_cpu_s_per_gib", "send_sys_s_per_gib",
                "recv_sys_s_per_gib", "send_rss_mib", "recv_rss_mib"]
        print("\n| scenario | impl | " + " | ".join(keys) + " |")
        print("|---|---|" + "---|" * len(keys))
        for (name, impl), r in results.items():
            print(f"| {name} | {impl} | " + " | ".join(f"{r[k]:.2f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
