"""Dilation throughput, CPU and memory: ours and the reference 0.24 side by
side in one run (results in docs/performance.md, "Dilation").

Each scenario runs a receiving and a sending process (bench/dilation_peer.py
under our venv's or the reference venv's Python) through our Mailbox
server (and our Transit relay for relay-only), in a loopback-only network
namespace (re-executes itself under ``unshare -n``; needs root), because the
reference listens on and advertises every local address.

  .venv/bin/python bench/dilation_bench.py [--size-mib 1024] [--rounds 3] [--markdown]
        [--scenarios one-direct,eight-direct,one-relay] [--src NAME=PATH ...]

Rounds are interleaved: each round measures the floor, then every
scenario with every implementation in turn, so the machine's load falls
on all of them alike; the summary gives medians over the rounds. Ours
runs this checkout's src/ (PYTHONPATH), whatever the venv was installed
from; ``--src NAME=PATH`` adds our peer from other sources (e.g. `git
archive main src` unpacked: PATH is its src/), for an A/B in one run.

The floor (bench/_dilation_floor.py), measured in this process every
round: ChaCha20-Poly1305 alone over exactly the Noise messages of the
bench's records (sealing for the sender, opening for the receiver), a bare
loopback socket moving the same wire bytes (each side's own thread CPU),
and, once, the least fixed part of a process (an interpreter importing
the prescribed libraries, bench/_floor.py). Each side's CPU per GiB is
given as a multiple of its floor (``*_x_floor``) and of its cipher alone
(``*_x_cipher``); its whole process's CPU as a multiple of the fixed part
plus the floor of the bytes (``*_proc_x_floor``). ``ceiling_mib_per_s``
is the most any implementation could do with each side on a core of its
own, at the floor. The load average is printed at the start, after each
pair and at the end.

Lines (machine-readable):
  load start=1m,5m,15m cpus=N
  round=R dilation impl=ours scenario=one-direct mib=1024 mib_per_s=... seconds=...
        send_cpu_s_per_gib=... recv_cpu_s_per_gib=... (from the first byte to the end)
        send_rss_mib=... recv_rss_mib=... send_sys_s_per_gib=... recv_sys_s_per_gib=...
        (the system part) send_proc_cpu_s=... recv_proc_cpu_s=... (whole processes)
        send_kfaults_per_gib=... recv_kfaults_per_gib=... (minor page faults,
        thousands: fresh buffers the allocator took from the kernel) load=...
  floor cipher_seal_s_per_gib=... cipher_open_s_per_gib=... socket_send_s_per_gib=...
        socket_read_s_per_gib=... send_s_per_gib=... recv_s_per_gib=...
        process_fixed_s=... ceiling_mib_per_s=...
  median dilation impl=... scenario=... rounds=N (the medians of the above)
        send_x_floor=... recv_x_floor=... send_x_cipher=... recv_x_cipher=...
        send_proc_x_floor=... recv_proc_x_floor=...
  ratio scenario=... ours/ref mib_per_s=... send_cpu=... recv_cpu=... ceiling_over_ref=...
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _dilation_floor  # noqa: E402
import _floor  # noqa: E402
import _netns  # noqa: E402
from _ports import wait_listening  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(REPO, "bench", "dilation_peer.py")
PYTHONS = {"ours": os.path.join(REPO, ".venv", "bin", "python"),
           "ref": os.path.join(os.environ.get("WORMHOLE_REFERENCE_VENV")
                               or os.path.join(REPO, ".venv-ref"), "bin", "python")}
# --src NAME=PATH: our peer run from the sources in PATH (an A/B)
SOURCES = {"ours": os.path.join(REPO, "src")}
SCENARIOS = [("one-direct", 1, False), ("eight-direct", 8, False), ("one-relay", 1, True)]


def child_env(impl):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")
           and (impl in SOURCES or not k.startswith("DILATION_PEER_PROFILE"))}
    env["PYTHONUNBUFFERED"] = "1"
    if impl in SOURCES:
        # this checkout's sources (or --src's), whichever checkout the
        # venv was installed from (an editable install points at one)
        env["PYTHONPATH"] = SOURCES[impl]
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
                             cwd="/tmp", env=child_env("ours"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
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
            "send_proc_cpu_s": s.get("proc_cpu_s", 0.0),
            "recv_proc_cpu_s": r.get("proc_cpu_s", 0.0),
            "send_kfaults_per_gib": s["minflt"] / 1000 / gib,
            "recv_kfaults_per_gib": r["minflt"] / 1000 / gib}


def measure_floor():
    """The floor's parts, per GiB of payload (bench/_dilation_floor.py);
    the socket's the least of three tries, each side on its own: loopback
    TCP's cost moves with the wake-ups the other side needs, which
    another process's load changes from one try to the next."""
    seal, open_ = _dilation_floor.cipher_per_gib()
    tries = [_dilation_floor.socket_per_gib() for _ in range(3)]
    sock_send, sock_read = min(t[0] for t in tries), min(t[1] for t in tries)
    return {"cipher_seal": seal, "cipher_open": open_,
            "socket_send": sock_send, "socket_read": sock_read}


def median(values):
    return statistics.median(values)


def print_summary(results, floors, fixed_s, size):
    """Medians over the rounds, each side as a multiple of its floor and
    of its cipher alone, and ours against the reference."""
    fl = {k: median([f[k] for f in floors]) for k in floors[0]}
    fl["send"] = fl["cipher_seal"] + fl["socket_send"]
    fl["recv"] = fl["cipher_open"] + fl["socket_read"]
    gib = size / 2 ** 30
    ceiling = 1024 / max(fl["send"], fl["recv"])
    print("floor " + " ".join(f"{k}_s_per_gib={v:.3f}" for k, v in fl.items())
          + f" process_fixed_s={fixed_s:.3f} rounds={len(floors)}"
          f" ceiling_mib_per_s={ceiling:.0f}", flush=True)
    medians = {}
    for (name, impl), runs in results.items():
        m = {k: median([r[k] for r in runs]) for k in runs[0] if k != "gaps"}
        for side, cipher in (("send", "cipher_seal"), ("recv", "cipher_open")):
            m[f"{side}_x_floor"] = m[f"{side}_cpu_s_per_gib"] / fl[side]
            m[f"{side}_x_cipher"] = m[f"{side}_cpu_s_per_gib"] / fl[cipher]
            # the whole process against an interpreter importing what it
            # needs plus the floor of the bytes it moved
            m[f"{side}_proc_x_floor"] = m[f"{side}_proc_cpu_s"] / (fixed_s + gib * fl[side])
        medians[(name, impl)] = m
        print(f"median dilation impl={impl} scenario={name} rounds={len(runs)} "
              + " ".join(f"{k}={v:.2f}" for k, v in m.items()), flush=True)
    for (name, impl), m in medians.items():
        ref = medians.get((name, "ref"))
        if impl == "ref" or ref is None:
            continue
        print(f"ratio scenario={name} {impl}/ref mib_per_s={m['mib_per_s'] / ref['mib_per_s']:.2f}"
              f" send_cpu={m['send_cpu_s_per_gib'] / ref['send_cpu_s_per_gib']:.2f}"
              f" recv_cpu={m['recv_cpu_s_per_gib'] / ref['recv_cpu_s_per_gib']:.2f}"
              f" ceiling_over_ref={ceiling / ref['mib_per_s']:.2f}", flush=True)
    return medians


def load():
    return ",".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--impls", default="ours,ref")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cuts", type=int, default=0,
                    help="also measure recovery after this many cuts (relay-only, via a proxy)")
    ap.add_argument("--scenarios", default=",".join(n for n, _, _ in SCENARIOS))
    ap.add_argument("--src", action="append", default=[], metavar="NAME=PATH",
                    help="also our peer from the sources in PATH (e.g. `git archive main src` "
                    "unpacked, PATH its src/), as implementation NAME, interleaved")
    args = ap.parse_args()
    for spec in args.src:
        name, _, path = spec.partition("=")
        SOURCES[name] = os.path.abspath(path)
        PYTHONS[name] = PYTHONS["ours"]
        if name not in args.impls.split(","):
            args.impls += "," + name
    _netns.reexec_in_namespace(__file__, "DILATION_BENCH_NETNS")
    size = args.size_mib * 2 ** 20
    print(f"load start={load()} cpus={os.cpu_count()}", flush=True)
    fixed_s = _floor.import_cpu(PYTHONS["ours"])
    procs, ports = start_servers(with_relay=True)
    url = f"ws://127.0.0.1:{ports['mailbox']}/v1"
    relay = f"tcp:127.0.0.1:{ports['relay']}"
    results, floors = {}, []
    scenarios = [sc for sc in SCENARIOS if sc[0] in args.scenarios.split(",")]
    try:
        # rounds outermost: every implementation and the floor take turns,
        # so a change in the machine's load falls on all of them
        for rnd in range(1, args.rounds + 1):
            floors.append(measure_floor())
            for name, nsub, use_relay in scenarios:
                for impl in args.impls.split(","):
                    r = run_pair(impl, url, size, nsub, relay if use_relay else None, use_relay)
                    results.setdefault((name, impl), []).append(r)
                    print(f"round={rnd} dilation impl={impl} scenario={name} mib={args.size_mib} "
                          + " ".join(f"{k}={v:.2f}" for k, v in r.items() if k != "gaps")
                          + f" load={load()}", flush=True)
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
    medians = print_summary(results, floors, fixed_s, size)
    print(f"load end={load()}", flush=True)
    if args.markdown:
        keys = ["mib_per_s", "send_cpu_s_per_gib", "recv_cpu_s_per_gib", "send_x_cipher",
                "recv_x_cipher", "send_x_floor", "recv_x_floor", "send_rss_mib", "recv_rss_mib"]
        print("\n| scenario | impl | " + " | ".join(keys) + " |")
        print("|---|---|" + "---|" * len(keys))
        for (name, impl), m in medians.items():
            print(f"| {name} | {impl} | " + " | ".join(f"{m[k]:.2f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
