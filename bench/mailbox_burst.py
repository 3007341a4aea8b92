"""A burst of rendezvous pairs on a fresh Mailbox server: ours and the
reference, side by side, in one run.

    .venv/bin/python bench/mailbox_burst.py [--pairs 500] [--rounds 3]
        [--py-spy PATH [--profile-dir DIR]]

Each round starts each server fresh (`twistd -n wormhole-mailbox`, a
subprocess on 127.0.0.1 with its databases on disk, the *default* listen
queue: no `backlog=` in `--port`, as an operator would start it), then
starts all pairs at once (2 x PAIRS clients connecting in the same moment;
each pair is a whole rendezvous, `_loadgen.one_pair`), and records every
pair's latency and failure. Servers alternate within a round so a noisy
machine hits both alike.

One line per figure on stdout (`burst METRIC server=... value=...`), then
`burst ratio` lines (ours/ref). The target for ours (docs/performance.md,
"A burst of 500 pairs on a fresh server"): 0 failed pairs and p99 under
2 s at 500 pairs.

With `--py-spy`, one extra round per server runs with py-spy sampling the
server from its start to its exit (raw collapsed stacks, summarised on
stderr by `bench/pyspy_summary.py`); that round is not in the figures,
since sampling slows the server. `--rounds 0` profiles only.
"""

import argparse
import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _loadgen
import _procstat
import pyspy_summary
from mailbox_bench import HOST, Server, emit, log, percentile, raise_nofile


async def burst(port, pairs, timeout):
    latencies, failures = [], {}

    async def one():
        began = time.monotonic()
        try:
            await _loadgen.one_pair(HOST, port, timeout)
        except Exception as e:  # noqa: BLE001 (every failure is counted)
            kind = _loadgen.classify(e)
            failures[kind] = failures.get(kind, 0) + 1
            return
        latencies.append(time.monotonic() - began)

    began = time.monotonic()
    await asyncio.gather(*(one() for _ in range(pairs)))
    return latencies, failures, time.monotonic() - began


def _worker(port, pairs, timeout, start_at, loop, out):
    """A forked client process: its share of the burst, started at
    ``start_at`` (time.monotonic, shared by fork) like the others'."""
    _loadgen._raise_nofile()

    async def go():
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        c0 = _loadgen.cpu_seconds()
        result = await burst(port, pairs, timeout)
        return result + (_loadgen.cpu_seconds() - c0,)
    out.send(_loadgen.loop_runner(loop)(go()))
    out.close()


def _start_spy(py_spy, pid, out):
    return subprocess.Popen(
        [py_spy, "record", "--pid", str(pid), "--rate", "200",
         "--format", "raw", "--nonblocking", "--threads", "--output",
         out],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _finish_spy(spy, out):
    """py-spy stops by itself when the server it samples exits."""
    try:
        _, err = spy.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        spy.kill()  # by the object we started, never by name
        _, err = spy.communicate()
    if spy.returncode != 0 or not os.path.exists(out):
        raise RuntimeError("py-spy failed: " + err.decode("utf-8", "replace")
                           .strip()[-300:])


def run_round(server, pairs, timeout, workers, loop, py_spy=None,
              profile=None):
    """Every pair of the burst, split over ``workers`` client processes
    (one Python process cannot drive 1000 sockets at once without being
    the bottleneck on a small machine). With ``py_spy``, the server is
    sampled into ``profile`` while it runs."""
    server.start()
    spy = _start_spy(py_spy, server.pid, profile) if py_spy else None
    ctx = multiprocessing.get_context("fork")
    try:
        cpu0 = _procstat.cpu_seconds(server.pid)
        start_at = time.monotonic() + 0.5
        procs = []
        for i in range(workers):
            share = pairs // workers + (1 if i < pairs % workers else 0)
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(
                server.port, share, timeout, start_at, loop, child))
            proc.start()
            child.close()
            procs.append((proc, parent))
        latencies, failures, wall, client_cpu = [], {}, 0.0, 0.0
        for proc, pipe in procs:
            lat, fail, w, c = pipe.recv()
            proc.join()
            latencies += lat
            for k, v in fail.items():
                failures[k] = failures.get(k, 0) + v
            wall, client_cpu = max(wall, w), client_cpu + c
        cpu = _procstat.cpu_seconds(server.pid) - cpu0
    finally:
        server.stop()
        if spy is not None:
            _finish_spy(spy, profile)
    return latencies, failures, wall, cpu, client_cpu


def profile_round(servers, args, workdir):
    outdir = args.profile_dir or workdir
    os.makedirs(outdir, exist_ok=True)
    for name in args.profile_servers.split(","):
        server = servers[name]
        out = os.path.join(outdir, f"burst-{name}-{args.pairs}.raw")
        lat, fail, wall, cpu, _ = run_round(
            server, args.pairs, args.timeout, args.workers, args.loop,
            args.py_spy, out)
        log(f"profiled {name}: {len(lat)} ok, failures {fail}, "
            f"server CPU {cpu:.2f} s, profile {out}")
        sys.stderr.write(pyspy_summary.summarise(
            pyspy_summary.load(out), 20) + "\n")


def somaxconn():
    with open("/proc/sys/net/core/somaxconn") as f:
        return f.read().strip()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds one pair may take before it counts as "
                        "failed")
    p.add_argument("--ours-twistd", default=os.path.join(
        os.path.dirname(sys.executable), "twistd"))
    p.add_argument("--ref-twistd", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        ".venv-ref", "bin", "twistd"))
    p.add_argument("--workers", type=int, default=2,
                   help="client processes sharing the burst")
    p.add_argument("--loop", choices=["uvloop", "asyncio"],
                   default=_loadgen.default_loop())
    p.add_argument("--py-spy", metavar="PATH",
                   help="py-spy executable: one extra, unreported round per "
                        "server sampled by it")
    p.add_argument("--profile-dir", metavar="DIR",
                   help="where the py-spy profiles go (default: the "
                        "bench's temporary directory)")
    p.add_argument("--profile-servers", default="ours",
                   help="which servers to profile: ours, ref or ours,ref")
    args = p.parse_args(argv)
    raise_nofile()
    workdir = tempfile.mkdtemp(prefix="mailbox-burst-")
    log(f"pairs={args.pairs} rounds={args.rounds} workers={args.workers} "
        f"loop={args.loop} cpus={os.cpu_count()} "
        f"load1={os.getloadavg()[0]:.2f} somaxconn={somaxconn()}")
    results = {"ours": [], "ref": []}
    # backlog=0: the server's own default listen queue; each start() is a
    # fresh server with fresh databases
    servers = {"ours": Server("ours", args.ours_twistd, workdir, 0),
               "ref": Server("ref", args.ref_twistd, workdir, 0)}
    for r in range(args.rounds):
        for name in (("ours", "ref") if r % 2 == 0 else ("ref", "ours")):
            lat, fail, wall, cpu, client_cpu = run_round(
                servers[name], args.pairs, args.timeout, args.workers,
                args.loop)
            results[name].append((lat, fail, wall, cpu, client_cpu))
            log(f"round {r} {name}: {len(lat)} ok, failures {fail}, "
                f"p99 {percentile(sorted(lat), 99):.3f} s, wall {wall:.2f} s, "
                f"server CPU {cpu:.2f} s, load1 {os.getloadavg()[0]:.2f}")
    if args.py_spy:
        profile_round(servers, args, workdir)
    if not args.rounds:
        return 0
    summary = {}
    for name, rounds in results.items():
        lat = sorted(x for r in rounds for x in r[0])
        failed = sum(sum(r[1].values()) for r in rounds)
        by_round = sorted(percentile(sorted(r[0]), 99) for r in rounds
                          if r[0])
        s = {"p50_s": percentile(lat, 50), "p99_s": percentile(lat, 99),
             # the machine's load changes from round to round: the median
             # round says more than the pooled p99 on a shared machine
             "p99_round_median_s": (by_round[len(by_round) // 2]
                                    if by_round else float("nan")),
             "max_s": lat[-1] if lat else float("nan"),
             "failed_pairs": failed,
             "wall_s": sum(r[2] for r in rounds) / len(rounds),
             "server_cpu_s": sum(r[3] for r in rounds) / len(rounds),
             "client_cpu_s": sum(r[4] for r in rounds) / len(rounds)}
        summary[name] = s
        for metric, value in s.items():
            emit(f"burst {metric} server={name} pairs={args.pairs} "
                 f"rounds={args.rounds} value={value:.4g}")
    for metric in ("p50_s", "p99_s", "p99_round_median_s", "wall_s",
                   "server_cpu_s"):
        ref = summary["ref"][metric]
        ratio = summary["ours"][metric] / ref if ref else float("nan")
        emit(f"burst ratio {metric} pairs={args.pairs} ours/ref={ratio:.3g}")
    return 0 if summary["ours"]["failed_pairs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
