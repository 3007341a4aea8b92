"""A stream (``wormhole send -`` | ``wormhole receive --stdout``) against a
file of the same size (``wormhole send FILE`` / ``receive --accept-file``),
both over transfer-v2 (results in docs/performance.md, "Streams against
files").

Each run is a fresh pair of our CLIs on our Mailbox server, direct
connections on loopback, in a loopback-only network namespace
(re-executes itself under ``unshare -n``; needs root). The stream's
sender reads the same file through its standard input (``< FILE``), its
receiver writes standard output to a file beside where the file
scenario's receiver writes: the same bytes read and written, the
protocols' difference alone. Rounds interleave the two; every result is
checked (sha256 of what arrived).

  python bench/stream_bench.py [--size-mib 512] [--rounds 3] [--workdir /dev/shm]

One line per run and the medians:
  xfer scenario=stream mib=512 wall_s=... mib_per_s=... send_cpu_s=... recv_cpu_s=...
        send_rss_mib=... recv_rss_mib=...
  median scenario=stream rounds=3 wall_s=... mib_per_s=... ...
  ratio stream/file mib_per_s=...
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _netns  # noqa: E402
import transfer_bench as tb  # noqa: E402

CODE = "8-stream-bench"
SRC = os.path.join(tb.REPO, "src")


def run(scenario, url, relay_port, src, workdir):
    """One pair; wall from the sender's start to the receiver's exit."""
    glob = [sys.executable, "-m", "wormhole", "--relay-url", url, "--transit-helper",
            f"tcp:127.0.0.1:{relay_port}"]
    dest = f"{workdir}/streambench-dest-{os.getpid()}"
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    env = dict(tb.child_env("ours"), PYTHONPATH=SRC)
    rss = {n: f"/tmp/streambench-rss-{os.getpid()}-{n}" for n in ("send", "recv")}
    out = os.path.join(dest, os.path.basename(src))
    send_args = ["send", "--hide-progress", "--no-qr", "--code", CODE]
    if scenario == "stream":
        send_cmd, recv_cmd = send_args + ["-"], ["receive", "--hide-progress", "--stdout"]
        send_in, recv_out = open(src, "rb"), open(out, "wb")
    else:
        send_cmd, recv_cmd = send_args + [src], ["receive", "--hide-progress", "--accept-file"]
        send_in, recv_out = subprocess.DEVNULL, subprocess.DEVNULL
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        send = subprocess.Popen(tb.timed(glob + send_cmd, rss["send"]), stdin=send_in,
                                stdout=null, stderr=subprocess.PIPE, env=env, cwd="/tmp")
        recv = subprocess.Popen(tb.timed(glob + recv_cmd + [CODE], rss["recv"]),
                                stdin=subprocess.DEVNULL, stdout=recv_out,
                                stderr=subprocess.PIPE, env=env, cwd=dest)
        try:
            r, ended, s = tb.wait_pair(send, recv)
            wall = ended - t0
        finally:
            for f in (send_in, recv_out):
                if hasattr(f, "close"):
                    f.close()
    logs = (send.stderr.read() + recv.stderr.read()).decode(errors="replace")
    ok = send.returncode == 0 and recv.returncode == 0 and tb.sha256(out) == tb.sha256(src)
    shutil.rmtree(dest, ignore_errors=True)
    if not ok or "Using transfer-v2" not in logs:
        raise SystemExit(f"{scenario} failed (send rc={send.returncode}, "
                         f"recv rc={recv.returncode}):\n{logs[-3000:]}")
    return {"wall_s": wall, "mib_per_s": os.path.getsize(src) / 2 ** 20 / wall,
            "send_cpu_s": s["cpu_s"], "recv_cpu_s": r["cpu_s"],
            "send_rss_mib": tb.read_timed(rss["send"]), "recv_rss_mib": tb.read_timed(rss["recv"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp")
    args = ap.parse_args()
    _netns.reexec_in_namespace(__file__, "STREAM_BENCH_NETNS")
    src = os.path.join(args.workdir, f"streambench-{args.size_mib}.bin")
    if not os.path.exists(src) or os.path.getsize(src) != args.size_mib * 2 ** 20:
        with open(src, "wb") as f:
            for _ in range(args.size_mib):
                f.write(os.urandom(2 ** 20))
    tb.compile_sources(SRC)
    mailbox, mport = tb.start_server("ours", "mailbox")
    relay, rport = tb.start_server("ours", "relay")
    url = f"ws://127.0.0.1:{mport}/v1"
    runs = {"file": [], "stream": []}
    try:
        for _ in range(args.rounds):
            for scenario in runs:
                r = run(scenario, url, rport, src, args.workdir)
                print(f"xfer scenario={scenario} mib={args.size_mib} " + tb.fmt(r), flush=True)
                runs[scenario].append(r)
    finally:
        tb.stop_server(relay)
        tb.stop_server(mailbox)
    med = {}
    for scenario, rs in runs.items():
        med[scenario] = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print(f"median scenario={scenario} rounds={len(rs)} " + tb.fmt(med[scenario]),
              flush=True)
    print(f"ratio stream/file mib_per_s="
          f"{med['stream']['mib_per_s'] / med['file']['mib_per_s']:.3f}", flush=True)


if __name__ == "__main__":
    main()
