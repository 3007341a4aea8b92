"""File transfer and Transit relay: ours and the reference 0.24 side by side
in one run (results in docs/performance.md, "File transfer and relay").

Scenarios (each a fresh sender/receiver CLI pair on our Mailbox server):
  direct       both sides listen; the relay is offered but direct wins
  relay        --no-listen on both sides: every byte goes through a relay
               (ours through our relay, ref through the reference relay)
  relay-xref   ours through the reference relay (cross check)
  pipeline     ours only, no CLI and no network: each side's data path
               (read, sha256, seal / decode, open, sha256, write, fsync) in
               CPU-seconds, against SecretBox's one-core speed
plus the relay alone under 100 concurrent pairs of raw TCP clients
(bench/transfer_relayload.py), and SecretBox encrypt speed on one core.

Runs in a loopback-only network namespace (re-executes itself under
``unshare -n``; needs root) because the reference advertises every local
address.

  .venv/bin/python bench/transfer_bench.py [--size-mib 1024] [--pairs 100] [--quick]
        [--rounds N] [--backlog N] [--scenarios ...] [--profile-dir DIR]

One machine-readable line per figure, e.g.
  transfer impl=ours scenario=direct mib=1024 wall_s=... mib_per_s=... rendezvous_s=...
        send_cpu_s=... recv_cpu_s=... send_rss_mib=... recv_rss_mib=... relay_cpu_s=...
  relayload impl=ours pairs=100 mb_each=10 hs_p50_ms=... hs_p99_ms=... failures=0 ...
  ratio ...
"""

import argparse
import asyncio
import hashlib
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _netns  # noqa: E402
import _procstat  # noqa: E402
import transfer_relayload  # noqa: E402
from _ports import free_port, wait_listening  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_VENV = os.environ.get("WORMHOLE_REFERENCE_VENV") or os.path.join(REPO, ".venv-ref")
VENVS = {"ours": os.path.join(REPO, ".venv"), "ref": REF_VENV}
# A/B runs of our own changes: `--impls ours,base` runs "base" as our CLI
# with PYTHONPATH=$TRANSFER_BENCH_BASE_SRC (e.g. `git archive HEAD src`
# unpacked somewhere), through our relay
BASE_SRC = os.environ.get("TRANSFER_BENCH_BASE_SRC")
if BASE_SRC:
    VENVS["base"] = VENVS["ours"]
CODE = "7-guitarist-revenge"


def child_env(impl):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")}
    env["PYTHONUNBUFFERED"] = "1"
    if impl == "base":
        env["PYTHONPATH"] = BASE_SRC
    if impl in ("ours", "base"):
        # the namespace has only lo anyway; this keeps ours honest outside it
        env["WORMHOLE_TRANSIT_ADDRESSES"] = "127.0.0.1"
    return env


def compile_sources(*trees):
    """Byte-compile our source trees (their own ``__pycache__``, ignored by
    git) before anything is measured, as ``pip install`` does for the
    reference in its venv. Without it an environment with
    PYTHONDONTWRITEBYTECODE=1 (these sessions') makes every one of our CLI
    processes compile ~130 modules from source: ~0.09 s of CPU a process
    on this machine that the reference never pays (docs/performance.md,
    "Session 8: the fixed part")."""
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", tree],
                       check=True, stdout=subprocess.DEVNULL)


def vm_hwm_mib(pid):
    """Peak RSS of `pid`'s current address space (VmHWM, proc(5)). Unlike
    wait4's ru_maxrss it does not start from the RSS of the parent that forked
    it (Linux carries that high-water mark across exec)."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(cmd, out):
    """`cmd` under GNU time, which forks from a tiny process, so its %M
    (max RSS, KiB) is the CLI's own."""
    return ["/usr/bin/time", "-f", "%M", "-o", out] + cmd


def read_timed(out):
    with open(out) as f:
        kib = int(f.read().split()[-1])
    os.unlink(out)
    return kib / 1024


def kill_tree(p):
    """Kill `p` and its direct children (the CLI under /usr/bin/time)."""
    try:
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    for pid in kids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    p.kill()


def wait_rusage(p, timeout=None):
    """Reap `p` with wait4: its CPU (and its reaped children's)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG if deadline else 0)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return {"cpu_s": ru.ru_utime + ru.ru_stime}
        if time.monotonic() > deadline:
            kill_tree(p)
            deadline = None
        time.sleep(0.02)



def wait_pair(send, recv):
    """Reap a receiver, then its sender: (receiver's rusage, the time the
    receiver ended, sender's rusage); whatever still runs on the way out
    (a failure, a timeout) is killed and reaped."""
    try:
        r = wait_rusage(recv, timeout=1800)
        ended = time.monotonic()
        s = wait_rusage(send, timeout=120)
    finally:
        for p in (send, recv):
            if p.returncode is None:
                kill_tree(p)
                wait_rusage(p)
    return r, ended, s

# python -c CPU_PROFILE OUT.prof SCRIPT ARGS...: cProfile in process CPU time
CPU_PROFILE = (
    "import cProfile, runpy, sys, time\n"
    "out = sys.argv[1]; sys.argv = sys.argv[2:]\n"
    "p = cProfile.Profile(time.process_time)\n"
    "try:\n"
    "    p.runcall(runpy.run_path, sys.argv[0], run_name='__main__')\n"
    "finally:\n"
    "    p.dump_stats(out)\n")

BACKLOG = ""  # e.g. ":backlog=1024" from --backlog; Twisted's default listen queue is 50


def start_server(impl, kind):
    """twistd wormhole-mailbox or transitrelay of `impl` on 127.0.0.1."""
    port = free_port()
    if kind == "mailbox":
        args = ["wormhole-mailbox", f"--port=tcp:{port}:interface=127.0.0.1",
                f"--channel-db=/tmp/xferbench-{port}.sqlite"]
    else:
        args = ["transitrelay", f"--port=tcp:{port}:interface=127.0.0.1{BACKLOG}"]
    p = subprocess.Popen([os.path.join(VENVS[impl], "bin", "twistd"), "-n", "--pidfile=",
                          "--logfile=/dev/null"] + args, cwd="/tmp", env=child_env(impl),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_listening(port, p, f"{impl} {kind}")
    return p, port


def stop_server(p):
    hwm = vm_hwm_mib(p.pid)
    p.terminate()
    return dict(wait_rusage(p, timeout=30), rss_mib=hwm)


def make_source(size):
    path = f"/tmp/xferbench-src-{size}.bin"
    if os.path.exists(path) and os.path.getsize(path) == size:
        return path
    block = os.urandom(16 * 2 ** 20)  # incompressible; wormhole does not compress anyway
    with open(path + ".tmp", "wb") as f:
        left = size
        while left:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
    os.rename(path + ".tmp", path)
    return path


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * 2 ** 20):
            h.update(chunk)
    return h.hexdigest()


def run_transfer(impl, url, relay_port, src, no_listen, profile_dir=None,
                 transit_helper=None):
    """One CLI send/receive pair; wall from the sender's start to the
    receiver's exit. The rendezvous part ends when the receiver prints the
    offer ('Receiving file ...'), i.e. before any Transit connection."""
    wormhole = os.path.join(VENVS[impl], "bin", "wormhole")
    pre = []
    if profile_dir:
        # cProfile around the CLI script (our venv's Python); not a measured
        # run. Timed in CPU seconds: wall-clock shares mislead on a shared
        # machine (a send(2) preempted by another process looks expensive)
        pre = [os.path.join(VENVS[impl], "bin", "python"), "-c", CPU_PROFILE]
    glob = [wormhole, "--relay-url", url, "--transit-helper",
            transit_helper or f"tcp:127.0.0.1:{relay_port}"]
    nl = ["--no-listen"] if no_listen else []
    out = f"/tmp/xferbench-out-{os.getpid()}.bin"
    if os.path.exists(out):
        os.unlink(out)
    env = child_env(impl)
    t0 = time.monotonic()
    tag = "relay" if no_listen else "direct"
    rss_out = {n: f"/tmp/xferbench-rss-{os.getpid()}-{n}" for n in ("send", "recv")}
    send_cmd = ((pre and pre + [f"{profile_dir}/{impl}-{tag}-send.prof"])
                + glob + ["send", "--hide-progress", "--code", CODE] + nl + [src])
    recv_cmd = ((pre and pre + [f"{profile_dir}/{impl}-{tag}-recv.prof"])
                + glob + ["receive", "--hide-progress", "--accept-file", "-o", out] + nl + [CODE])
    send = subprocess.Popen(timed(send_cmd, rss_out["send"]),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, cwd="/tmp")
    recv = subprocess.Popen(timed(recv_cmd, rss_out["recv"]),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, cwd="/tmp")
    marks, logs = {}, {"send": [], "recv": []}

    def reader(name, p):
        for line in p.stdout:
            text = line.decode(errors="replace")
            logs[name].append(text)
            if name == "recv" and "Receiving" in text and "offer" not in marks:
                marks["offer"] = time.monotonic()
            elif name == "recv" and text.startswith("Receiving ("):
                marks["connected"] = time.monotonic()  # Transit is up
            elif name == "recv" and text.startswith("Received file"):
                marks["written"] = time.monotonic()  # renamed, before the close

    threads = [threading.Thread(target=reader, args=(n, p), daemon=True)
               for n, p in (("send", send), ("recv", recv))]
    for t in threads:
        t.start()
    r, t_end, s = wait_pair(send, recv)
    for t in threads:
        t.join(5)
    ok = (recv.returncode == 0 and send.returncode == 0 and os.path.exists(out)
          and os.path.getsize(out) == os.path.getsize(src))
    if ok:
        ok = sha256(out) == sha256(src)
    if os.path.exists(out):
        os.unlink(out)
    if not ok:
        raise SystemExit(f"{impl} transfer failed (send rc={send.returncode}, "
                         f"recv rc={recv.returncode}):\nsend: {''.join(logs['send'])[-2000:]}\n"
                         f"recv: {''.join(logs['recv'])[-2000:]}")
    wall = t_end - t0
    return {"wall_s": wall, "mib_per_s": os.path.getsize(src) / 2 ** 20 / wall,
            "rendezvous_s": marks.get("offer", float("nan")) - t0,
            # the file part alone: from the offer to the receiver's exit
            "after_offer_mib_per_s": os.path.getsize(src) / 2 ** 20
            / (t_end - marks.get("offer", float("nan"))),
            # phases: Transit connect (offer -> "Receiving (...)"), the bytes
            # (-> "Received file written"), then closing and exiting
            "connect_s": marks.get("connected", float("nan")) - marks.get("offer", float("nan")),
            "bytes_s": marks.get("written", float("nan")) - marks.get("connected", float("nan")),
            "exit_s": t_end - marks.get("written", float("nan")),
            "send_cpu_s": s["cpu_s"], "recv_cpu_s": r["cpu_s"],
            "send_rss_mib": read_timed(rss_out["send"]),
            "recv_rss_mib": read_timed(rss_out["recv"])}


def secretbox_mib_per_s(seconds=2.0):
    """What one core encrypts with PyNaCl SecretBox, 64 KiB records."""
    from nacl.secret import SecretBox
    box = SecretBox(os.urandom(32))
    rec = os.urandom(64 * 1024)
    nonce = bytes(24)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(64):
            box.encrypt(rec, nonce)
        n += 64
    return n * len(rec) / 2 ** 20 / (time.perf_counter() - t0)


def pipeline(src):
    """Our data path alone, each side on one core, no network and no peer: the
    sender's read + sha256 + seal into frames (what its socket would get), the
    receiver's decode + open + sha256 + write + fsync. CPU-seconds of this
    process for each side, MiB/s = size / CPU-s. Compare with SecretBox's
    one-core figure: the target is at least half (docs/performance.md, "File
    transfer and relay", its "Targets")."""
    import io

    from wormhole import _landing
    from wormhole._transit import _codec, _pipe
    from wormhole.transfer import _mover

    size = os.path.getsize(src)
    key = os.urandom(32)

    class Sink:
        """The transport as the sender sees it: writes are buffered, the
        producer is paused past the 256 KiB high-water mark, and ``flush``
        joins the buffered writes into one bytes as Twisted's doWrite does
        before send(2) (a single bytes is passed through uncopied)."""

        def __init__(self):
            self.enc, self.producer, self.frames = _codec.RecordEncoder(key), None, []
            self.buffered = 0

        def registerProducer(self, producer, streaming):
            self.producer = producer

        def unregisterProducer(self):
            self.producer = None

        def _write(self, data):
            self.frames.append(data)
            self.buffered += len(data)
            if self.buffered > _pipe.BULK_BUFFER and self.producer is not None:
                self.producer.pauseProducing()

        def send_record(self, record):
            self._write(self.enc.encode(record))

        def send_records(self, records):
            self._write(self.enc.encode_many(records))

        def flush(self):
            b"".join(self.frames)
            self.frames.clear()
            self.buffered = 0

    # the sender: the CLI's producer, the sink pausing it at 256 KiB as
    # the transport does and joining what it buffered; then dropped
    sink = Sink()
    c0 = time.process_time()
    with open(src, "rb") as f:
        streamer = _mover._FileStreamer(f, sink, hashlib.sha256(), lambda n: None,
                                        os.path.getsize(src))
        sink.registerProducer(streamer, True)
        while not streamer.done.called:
            streamer.resumeProducing()
            sink.flush()
    send_cpu = time.process_time() - c0
    # the receiver: frames made outside the clock, read as the socket would
    enc, dec = _codec.RecordEncoder(key), _codec.RecordDecoder(key)
    out = f"/tmp/xferbench-pipeline-{os.getpid()}.bin"
    partial = _landing.PartialFile(out)
    recv_cpu = 0.0
    try:
        with open(src, "rb") as f:
            while block := f.read(2 ** 20):
                stream = b"".join(enc.encode(block[i:i + _mover.RECORD_SIZE])
                                  for i in range(0, len(block), _mover.RECORD_SIZE))
                c0 = time.process_time()
                view = io.BytesIO(stream)
                while chunk := view.read(_pipe.BULK_BUFFER):  # the socket's read size
                    for record in dec.feed(chunk):
                        partial.write(record)
                recv_cpu += time.process_time() - c0
        c0 = time.process_time()
        partial.finish()
        recv_cpu += time.process_time() - c0
    finally:
        partial.abort()
    mib = size / 2 ** 20
    return {"send_cpu_s": send_cpu, "send_mib_per_s": mib / send_cpu,
            "recv_cpu_s": recv_cpu, "recv_mib_per_s": mib / recv_cpu}


def fmt(d):
    return " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=None, help="file size (default 1024)")
    ap.add_argument("--pairs", type=int, default=None, help="relay load pairs (default 100)")
    ap.add_argument("--mb-each", type=int, default=10, help="MB pushed per relay-load pair")
    ap.add_argument("--quick", action="store_true", help="256 MiB, 20 pairs")
    ap.add_argument("--impls", default="ours,ref")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat every measurement; every round is printed, the best "
                    "(fastest transfer, cheapest relay) goes into the ratios")
    ap.add_argument("--profile-dir", help="only: one extra direct and relay transfer of ours "
                    "each side under cProfile, .prof files into this directory (no figures)")
    ap.add_argument("--scenarios", default="pipeline,direct,relay,relay-xref,relayload")
    ap.add_argument("--backlog", type=int, help="listen queue of the relays (default Twisted's 50)")
    args = ap.parse_args()
    if args.backlog:
        global BACKLOG
        BACKLOG = f":backlog={args.backlog}"
    size_mib = args.size_mib or (256 if args.quick else 1024)
    pairs = args.pairs or (20 if args.quick else 100)
    _netns.reexec_in_namespace(__file__, "TRANSFER_BENCH_NETNS")
    scen = args.scenarios.split(",")
    impls = args.impls.split(",")
    res = {}

    sb = secretbox_mib_per_s()
    print(f"secretbox one_core_mib_per_s={sb:.1f}", flush=True)
    print(f"# making a {size_mib} MiB source file", file=sys.stderr, flush=True)
    src = make_source(size_mib * 2 ** 20)

    if "pipeline" in scen and not args.profile_dir:
        p = pipeline(src)
        print(f"pipeline impl=ours mib={size_mib} " + fmt(p), flush=True)
        print(f"ratio scenario=pipeline impl=ours send_mib_per_s/secretbox="
              f"{p['send_mib_per_s'] / sb:.2f} recv_mib_per_s/secretbox="
              f"{p['recv_mib_per_s'] / sb:.2f}", flush=True)
        if scen == ["pipeline"]:
            return
    compile_sources(os.path.join(REPO, "src"), *([BASE_SRC] if BASE_SRC else []))
    mailbox, mport = start_server("ours", "mailbox")
    url = f"ws://127.0.0.1:{mport}/v1"
    try:
        if args.profile_dir:
            os.makedirs(args.profile_dir, exist_ok=True)
            for no_listen in (False, True):
                relay, rport = start_server("ours", "relay")
                try:
                    r = run_transfer("ours", url, rport, src, no_listen, args.profile_dir)
                    print(f"# profiled ours no_listen={no_listen}: " + fmt(r), file=sys.stderr)
                finally:
                    stop_server(relay)
            return
        plan = []
        for impl in impls:
            relay_impl = "ours" if impl == "base" else impl
            if "direct" in scen:
                plan.append((impl, "direct", relay_impl, False))
            if "relay" in scen:
                plan.append((impl, "relay", relay_impl, True))
        if "relay-xref" in scen and "ours" in impls:
            plan.append(("ours", "relay-xref", "ref", True))
        for impl, name, relay_impl, no_listen in plan * args.rounds:
            print(f"# {impl} {name}", file=sys.stderr, flush=True)
            relay, rport = start_server(relay_impl, "relay")
            try:
                cpu0 = _procstat.cpu_seconds(relay.pid)  # leave out twistd's start-up
                r = run_transfer(impl, url, rport, src, no_listen)
                r["relay_cpu_s"] = _procstat.cpu_seconds(relay.pid) - cpu0
            finally:
                ru = stop_server(relay)
            r["relay_rss_mib"] = ru["rss_mib"]
            if (impl, name) not in res or r["mib_per_s"] > res[(impl, name)]["mib_per_s"]:
                res[(impl, name)] = r
            print(f"transfer impl={impl} scenario={name} relay={relay_impl} mib={size_mib} "
                  + fmt(r), flush=True)
        if "relayload" in scen:
            for impl in impls * args.rounds:
                print(f"# {impl} relay, {pairs} pairs", file=sys.stderr, flush=True)
                relay, rport = start_server(impl, "relay")
                try:
                    cpu0 = _procstat.cpu_seconds(relay.pid)
                    load = asyncio.run(transfer_relayload.run(rport, pairs,
                                                              args.mb_each * 10 ** 6))
                    cpu = _procstat.cpu_seconds(relay.pid) - cpu0
                finally:
                    ru = stop_server(relay)
                load["relay_cpu_s"] = cpu
                load["relay_cpu_s_per_gb"] = cpu / (load["bytes_relayed"] / 1e9) \
                    if load["bytes_relayed"] else float("nan")
                load["relay_rss_mib"] = ru["rss_mib"]
                old = res.get((impl, "relayload"))
                if old is None or load["relay_cpu_s_per_gb"] < old["relay_cpu_s_per_gb"]:
                    res[(impl, "relayload")] = load
                print(f"relayload impl={impl} pairs={pairs} mb_each={args.mb_each} " + fmt(load),
                      flush=True)
    finally:
        mailbox.terminate()
        wait_rusage(mailbox, timeout=30)
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(f"/tmp/xferbench-{mport}.sqlite{suffix}"):
                os.unlink(f"/tmp/xferbench-{mport}.sqlite{suffix}")

    # ratios: ours / ref (throughput: higher is better; CPU: lower is better)
    for name in ("direct", "relay"):
        o, f = res.get(("ours", name)), res.get(("ref", name))
        if o and f:
            print(f"ratio scenario={name} mib_per_s ours/ref={o['mib_per_s'] / f['mib_per_s']:.2f} "
                  f"send_cpu ours/ref={o['send_cpu_s'] / f['send_cpu_s']:.2f} "
                  f"recv_cpu ours/ref={o['recv_cpu_s'] / f['recv_cpu_s']:.2f}", flush=True)
        if o:
            print(f"ratio scenario={name} impl=ours mib_per_s/secretbox={o['mib_per_s'] / sb:.2f}",
                  flush=True)
    o, f = res.get(("ours", "relayload")), res.get(("ref", "relayload"))
    if o and f:
        print(f"ratio scenario=relayload relay_cpu_per_gb ours/ref="
              f"{o['relay_cpu_s_per_gb'] / f['relay_cpu_s_per_gb']:.2f}", flush=True)
    o, f = res.get(("ours", "relay")), res.get(("ref", "relay"))
    if o and f:
        gib = size_mib / 1024
        print(f"ratio scenario=relay relay_cpu_s_per_gib ours={o['relay_cpu_s'] / gib:.2f} "
              f"ref={f['relay_cpu_s'] / gib:.2f}", flush=True)


if __name__ == "__main__":
    main()
