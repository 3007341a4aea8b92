"""Dilated File Transfer (transfer-v2) beside the classic protocol, in one
run (results in docs/performance.md, "The default path against the
reference").

Each run is a fresh CLI sender/receiver pair on our Mailbox server, direct
connections on loopback, in a loopback-only network namespace (re-executes
itself under ``unshare -n``; needs root):

  file   one file (default 1 GiB)
  dir    a directory of many files (default 2,000 files, about 200 MB)

for these implementations:

  ours-v2       our CLI, transfer-v2 (both sides announce it)
  ours-classic  our CLI with --classic (Transit; a directory is zipped)
  ref           the reference 0.24 CLI (classic; a directory is zipped)
  NAME          with ``--src NAME=PATH``: our CLI, transfer-v2, from the
                sources in PATH (e.g. `git archive BASE src` unpacked, PATH
                its src/): an A/B of our own changes, interleaved with the others

  .venv/bin/python bench/transfer_v2_bench.py [--size-mib 1024] [--files 2000]
        [--file-kib 100] [--rounds N] [--impls ours-v2,ours-classic,ref] [--scenarios file,dir]
        [--workdir /dev/shm] [--placement shared,pinned] [--profile-dir DIR]

``--placement`` (docs/performance.md, "The default path against the
reference"): ``shared`` lets both CLIs share the machine's cores as the
scheduler likes (one computer sending to itself); ``pinned`` runs the sender
under ``taskset -c 0`` and the receiver under ``taskset -c 1``, one core each,
as two computers would be. Every round runs each placement, scenario and
implementation in turn (interleaved), and the tables give the median of the
rounds: wall, MiB/s, CPU per GiB of each side (user+system over the bytes
moved) and peak RSS. For one file, also the waits around the bytes:
``setup_s`` from the launch of both CLIs (each holds the code from its
command line) to the first byte on the receiver's disk (of which
``code_s``, to the sender's "Wormhole code is" line: start-up), and
``close_s`` from the last byte there to both exits (``waits`` lines, ours
beside the reference; polled every 2 ms).

``--profile-dir DIR`` runs, instead of the measured rounds, one transfer
per scenario and implementation with each CLI under cProfile timed in
process CPU seconds (``DIR/IMPL-SCENARIO-send.prof`` / ``-recv.prof``):
where the CPU goes, undistorted by a loaded machine's waiting.

``--slope`` also runs the file scenario at a quarter of the size, so each
implementation's CPU splits into a fixed part (start-up, rendezvous, shut-down)
and a part per GiB; ``--floor`` measures, in this process, the per-GiB CPU of
the work transfer-v2 prescribes (BLAKE2b of every byte on both sides,
ChaCha20-Poly1305 sealing and opening of every 64 KiB record, reading the
source and writing the target) and of the classic protocol's (SHA-256,
XSalsa20-Poly1305), and loopback TCP's copy; with both it prints the highest
ratio any transfer-v2 implementation could reach on this machine when the two
processes share its cores (the run is CPU-bound: wall = CPU / cores), against
the reference's measured CPU. With ``--placement pinned`` too,
``ceiling_pinned`` is that bound for a core per side (docs/performance.md,
"Whether 1.3x pinned is reachable here"): the run lasts at least as long as its
busier side's least CPU (a fixed part plus the prescribed work for every byte),
against the reference's measured pinned wall. ``--floor`` also measures
BLAKE2b's implementations on this machine and the receiver's work done three
ways (a fresh plaintext per record, ``decrypt_into`` one buffer, hashing on a
worker thread).

Our source trees (this checkout's src/ and every ``--src``) are
byte-compiled before anything runs, as ``pip install`` does for the
reference: otherwise, under PYTHONDONTWRITEBYTECODE=1, each of our CLI
processes compiles its ~130 modules from source (~0.09 s of CPU).

``--workdir`` holds the sources and the receivers' folders (default
/tmp): on a tmpfs the disk is out of the picture (on this shared VM the
disk, not the protocol, bounded every implementation at ~60 MiB/s).

One machine-readable line per run, the medians and their ratios:
  xfer impl=ours-v2 scenario=file placement=shared mib=1024 wall_s=... mib_per_s=...
        send_cpu_s=... recv_cpu_s=... send_rss_mib=... recv_rss_mib=...
  median impl=ours-v2 scenario=file placement=shared rounds=3 wall_s=...
        send_cpu_per_gib_s=... recv_cpu_per_gib_s=... ...
  ratio scenario=file placement=shared ours-v2/ref mib_per_s=... wall=...
  waits scenario=file placement=shared ours-v2 code_s=... setup_s=... close_s=... ref code_s=...
"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floor  # noqa: E402
import _netns  # noqa: E402
import transfer_bench as tb  # noqa: E402

CODE = "8-transfer-v2"
V2_USED = "Using transfer-v2"



def make_tree(nfiles, file_kib, workdir):
    """``nfiles`` incompressible files in 20 sub-folders (cached in ``workdir``)."""
    root = f"{workdir}/xferv2bench-tree-{nfiles}x{file_kib}"
    if os.path.isdir(root) and sum(len(f) for _, _, f in os.walk(root)) == nfiles:
        return root
    shutil.rmtree(root + ".tmp", ignore_errors=True)
    block = os.urandom(file_kib * 1024 + 4096)
    for i in range(nfiles):
        folder = os.path.join(root + ".tmp", f"part{i % 20:02d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file{i:05d}.bin"), "wb") as f:
            # different bytes per file, still incompressible
            f.write(block[i % 4096:i % 4096 + file_kib * 1024])
    os.rename(root + ".tmp", root)
    return root


def tree_digest(root):
    h = hashlib.sha256()
    for dirpath, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(dirpath, n)
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                while chunk := f.read(4 * 2 ** 20):
                    h.update(chunk)
    return h.hexdigest()


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(path) for n in ns)


def make_file(size, workdir):
    src = tb.make_source(size)  # cached in /tmp
    if os.path.dirname(src) == workdir:
        return src
    dst = os.path.join(workdir, os.path.basename(src))
    if not (os.path.exists(dst) and os.path.getsize(dst) == size):
        shutil.copyfile(src, dst)
    return dst


def floor(src, workdir, mib=512):
    """Per-GiB CPU of the prescribed work of each protocol, one side at a
    time: the sender reads, hashes and seals every record, the receiver
    opens, hashes and writes it."""
    out_path = os.path.join(workdir, f"xferv2bench-floor-{os.getpid()}")
    total = mib * 2 ** 20
    result = {}
    for proto, hasher, aead in (("v2", lambda: hashlib.blake2b(digest_size=32),
                                 _floor.chacha20poly1305),
                                ("classic", hashlib.sha256, _floor.secretbox)):
        seal, open_ = aead()
        h = hasher()
        result[f"{proto}_send"] = _floor.per_gib(lambda c, h=h, seal=seal: (h.update(c), seal(c)),
                                                 _floor.file_chunks(src), total)
        h = hasher()
        with open(out_path, "wb", buffering=0) as out:
            def receive(_chunk, out=out, h=h, open_=open_):
                plain = open_()
                h.update(plain)
                out.write(plain)
            result[f"{proto}_recv"] = _floor.per_gib(receive, _floor.file_chunks(src), total)
        os.unlink(out_path)
    result["loopback_tcp"] = _floor.loopback_tcp_per_gib(mib)
    return result


def split_cpu(small, large, small_mib, large_mib):
    """(fixed CPU-s, CPU-s per GiB) of one side from two sizes' CPU-s."""
    per_gib = (large - small) * 1024 / (large_mib - small_mib)
    return large - per_gib * large_mib / 1024, per_gib


# the cores of each side with --placement pinned: two computers, one core each
PINNED = {"send": ["taskset", "-c", "0"], "recv": ["taskset", "-c", "1"]}


# --src NAME=PATH: implementations that are our CLI from other sources
SOURCES = {}


def run(impl, url, relay_port, src, workdir, placement="shared", profile=None):
    """One pair; wall from the sender's start to the receiver's exit.
    ``profile``: a path prefix; each CLI then runs under cProfile (CPU
    time) and dumps to PREFIX-send.prof / PREFIX-recv.prof."""
    venv = "ref" if impl == "ref" else "ours"
    wormhole = os.path.join(tb.VENVS[venv], "bin", "wormhole")
    pre = {"send": [], "recv": []}
    for side in pre:
        if placement == "pinned":
            pre[side] += PINNED[side]
        if profile:
            pre[side] += [os.path.join(tb.VENVS[venv], "bin", "python"), "-c",
                          tb.CPU_PROFILE, f"{profile}-{side}.prof"]
    glob = [wormhole, "--relay-url", url, "--transit-helper", f"tcp:127.0.0.1:{relay_port}"]
    classic = ["--classic"] if impl == "ours-classic" else []
    # no QR code from either sender: both draw one by default, and ours
    # drawing it alone cost our sender ~0.02 s (qrcode and PIL imported)
    extra_send = ["--no-qr"]
    dest = f"{workdir}/xferv2bench-dest-{os.getpid()}"
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    env = tb.child_env(venv)
    if impl in SOURCES:
        env["PYTHONPATH"] = SOURCES[impl]
    rss = {n: f"/tmp/xferv2bench-rss-{os.getpid()}-{n}" for n in ("send", "recv")}
    send_cmd = (pre["send"] + glob + ["send", "--hide-progress", "--code", CODE] + classic
                + extra_send + [src])
    recv_cmd = (pre["recv"] + glob + ["receive", "--hide-progress", "--accept-file"] + classic
                + [CODE])
    t0 = time.monotonic()
    send = subprocess.Popen(tb.timed(send_cmd, rss["send"]), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd="/tmp")
    recv = subprocess.Popen(tb.timed(recv_cmd, rss["recv"]), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=dest)
    out = {"send": Lines(send.stdout), "recv": Lines(recv.stdout)}
    for lines in out.values():
        lines.start()
    watch = None
    if os.path.isfile(src):
        watch = Watch(dest, os.path.getsize(src), (send.pid, recv.pid), t0)
        watch.start()
    try:
        r = tb.wait_rusage(recv, timeout=1800)
        t_end = time.monotonic()
        s = tb.wait_rusage(send, timeout=120)
    finally:
        for p in (send, recv):
            if p.returncode is None:
                tb.kill_tree(p)
                tb.wait_rusage(p)
        waits = watch.result() if watch else {}
    send_log = out["send"].text()
    logs = send_log + out["recv"].text()
    code_at = out["send"].first(CODE_LINE)
    if waits and code_at is not None:
        # the set-up's two parts: the sender's start-up (the process, its
        # imports, the Mailbox connection) and from its code to the bytes
        # (rendezvous, PAKE, the connection race)
        waits["code_s"] = code_at - t0
    out = os.path.join(dest, os.path.basename(src.rstrip("/")))
    ok = send.returncode == 0 and recv.returncode == 0 and os.path.exists(out)
    if ok:
        ok = (tb.sha256(out) == tb.sha256(src) if os.path.isfile(src)
              else tree_digest(out) == tree_digest(src))
    shutil.rmtree(dest, ignore_errors=True)
    if not ok:
        raise SystemExit(f"{impl} failed (send rc={send.returncode}, recv rc={recv.returncode}):"
                         f"\n{logs[-3000:]}")
    # the sender's own line, not the receiver's announcement: a run that
    # fell back to classic measures the wrong protocol
    if (impl == "ours-v2" or impl in SOURCES) and V2_USED not in send_log:
        raise SystemExit(f"ours-v2 did not use transfer-v2:\n{logs[-3000:]}")
    wall = t_end - t0
    return {"wall_s": wall, "mib_per_s": size_of(src) / 2 ** 20 / wall,
            "send_cpu_s": s["cpu_s"], "recv_cpu_s": r["cpu_s"],
            "send_rss_mib": tb.read_timed(rss["send"]), "recv_rss_mib": tb.read_timed(rss["recv"]),
            **waits}


class Lines(threading.Thread):
    """Reads a CLI's output as it comes, each line with the time it came
    (and a chatty CLI never blocks on a full pipe)."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self):
        for line in self.stream:
            self.lines.append((time.monotonic(), line.decode(errors="replace")))

    def text(self):
        self.join(timeout=10)
        return "".join(line for _, line in self.lines)

    def first(self, needle):
        """When the first line holding ``needle`` came, or None."""
        return next((t for t, line in self.lines if needle in line), None)


CODE_LINE = "Wormhole code is"  # both CLIs' sender, once it holds the code


class Watch(threading.Thread):
    """Polls, every ``POLL_S``, the bytes under the receiver's folder and
    whether each CLI has exited (a zombie in /proc, not reaped: its rusage
    is still the caller's to take). From the launch of both CLIs (each holds
    the code from its command line) it gives ``setup_s``, to the first byte
    on the receiver's disk, and ``close_s``, from the last byte (all ``size``
    bytes there) to the later of the two exits. Only for one file: walking a
    2,000-file tree every few milliseconds would load the machine it
    measures."""

    POLL_S = 0.002

    def __init__(self, dest, size, pids, t0):
        super().__init__(daemon=True)
        self.dest, self.size, self.pids, self.t0 = dest, size, pids, t0
        self.first = self.last = None
        self.exits = {}
        self.done = threading.Event()

    def _bytes(self):
        total = 0
        for dirpath, _, names in os.walk(self.dest):
            for n in names:
                try:
                    total += os.lstat(os.path.join(dirpath, n)).st_size
                except OSError:
                    pass  # renamed between the listing and the stat
        return total

    def _exited(self, pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
        except OSError:
            return True

    def run(self):
        while not self.done.is_set() and len(self.exits) < len(self.pids):
            now = time.monotonic()
            if self.last is None:
                got = self._bytes()
                if got and self.first is None:
                    self.first = now
                if got >= self.size:
                    self.last = now
            for pid in self.pids:
                if pid not in self.exits and self._exited(pid):
                    self.exits[pid] = now
            time.sleep(self.POLL_S)

    def result(self):
        # both CLIs are reaped by now: one more poll sees the last exit
        self.join(timeout=1.0)
        self.done.set()
        self.join()
        if self.first is None or self.last is None or len(self.exits) < len(self.pids):
            return {}
        return {"setup_s": self.first - self.t0, "close_s": max(self.exits.values()) - self.last}


def pinned_ceiling(ref_wall, gib, fl, split, imports):
    """With a core per side (--placement pinned) the run takes at least as
    long as its busier side's CPU: a fixed part (ours as measured with
    --slope, or only starting Python and importing the prescribed
    libraries) plus the prescribed work and its end of loopback TCP for
    every byte. Against the reference's measured pinned wall: the highest
    throughput ratio any transfer-v2 CLI could reach on this machine."""
    tcp = fl["loopback_tcp"] / 2  # each end's share of the copies
    fixed = {"imports": (imports, imports)}
    if split:
        fixed["ours"] = (split["send_fixed_s"], split["recv_fixed_s"])
    for name, (send_fixed, recv_fixed) in fixed.items():
        sides = {"send": (send_fixed, gib * (fl["v2_send"] + tcp)),
                 "recv": (recv_fixed, gib * (fl["v2_recv"] + tcp))}
        side = max(sides, key=lambda s: sum(sides[s]))
        least = sum(sides[side])
        print(f"ceiling_pinned scenario=file fixed={name} ours-v2/ref mib_per_s<="
              f"{ref_wall / least:.2f} (ref pinned wall {ref_wall:.2f} s; least transfer-v2 "
              f"wall {least:.2f} s: its {side} side, {sides[side][0]:.2f} s fixed + "
              f"{sides[side][1]:.2f} s prescribed for {gib:.2f} GiB; 1.3x needs <= "
              f"{ref_wall / 1.3:.2f} s)", flush=True)


def median_of(runs, mib):
    """The median of each figure over the rounds, CPU also per GiB moved."""
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    for side in ("send", "recv"):
        med[f"{side}_cpu_per_gib_s"] = statistics.median(
            r[f"{side}_cpu_s"] * 1024 / mib for r in runs)
    return med


def src_folders(ap, specs):
    """{NAME: PATH} of the ``--src NAME=PATH`` options (``ap.error`` on a bad one)."""
    found = {}
    for spec in specs:
        name, _, path = spec.partition("=")
        if not (name and os.path.isdir(os.path.join(path, "wormhole"))):
            ap.error(f"--src {spec}: NAME=PATH, PATH a src/ folder holding wormhole/")
        found[name] = os.path.abspath(path)
    return found


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--file-kib", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--impls", default="ours-v2,ours-classic,ref")
    ap.add_argument("--scenarios", default="file,dir")
    ap.add_argument("--placement", default="shared",
                    help="shared, pinned (sender on core 0, receiver on core 1) or both")
    ap.add_argument("--workdir", default="/tmp")
    ap.add_argument("--profile-dir", help="one cProfile'd (CPU time) run per scenario and "
                    "implementation instead of the measured rounds")
    ap.add_argument("--src", action="append", default=[], metavar="NAME=PATH",
                    help="also run our CLI from the sources in PATH as implementation NAME")
    ap.add_argument("--slope", action="store_true",
                    help="also a quarter-size file: CPU split into fixed and per GiB")
    ap.add_argument("--floor", action="store_true",
                    help="per-GiB CPU of each protocol's prescribed work, and the ceiling")
    args = ap.parse_args()
    placements = args.placement.split(",")
    if not set(placements) <= {"shared", "pinned"}:
        ap.error("--placement: shared, pinned or shared,pinned")
    _netns.reexec_in_namespace(__file__, "TRANSFER_V2_BENCH_NETNS")
    impls = args.impls.split(",")
    SOURCES.update(src_folders(ap, args.src))
    sources = {}
    mibs = {"file": args.size_mib, "quarter": args.size_mib // 4}
    if "file" in args.scenarios:
        sources["file"] = make_file(args.size_mib * 2 ** 20, args.workdir)
        if args.slope:
            sources["quarter"] = make_file(mibs["quarter"] * 2 ** 20, args.workdir)
    if "dir" in args.scenarios:
        sources["dir"] = make_tree(args.files, args.file_kib, args.workdir)
    tb.compile_sources(os.path.join(tb.REPO, "src"), *SOURCES.values())
    mailbox, mport = tb.start_server("ours", "mailbox")
    relay, rport = tb.start_server("ours", "relay")
    url = f"ws://127.0.0.1:{mport}/v1"
    runs = {}
    print(f"# load average at start {load_average()}", flush=True)
    try:
        if args.profile_dir:
            os.makedirs(args.profile_dir, exist_ok=True)
            for scenario, src in sources.items():
                for impl in impls:
                    r = run(impl, url, rport, src, args.workdir, placements[0],
                            profile=os.path.join(args.profile_dir, f"{impl}-{scenario}"))
                    print(f"# profiled impl={impl} scenario={scenario} " + tb.fmt(r),
                          flush=True)
            return
        for _ in range(args.rounds):
            for placement in placements:
                for scenario, src in sources.items():
                    for impl in impls:
                        r = run(impl, url, rport, src, args.workdir, placement)
                        mib = size_of(src) / 2 ** 20
                        print(f"xfer impl={impl} scenario={scenario} placement={placement} "
                              f"mib={mib:.0f} load={load_average()} " + tb.fmt(r), flush=True)
                        runs.setdefault((scenario, impl, placement), []).append(r)
    finally:
        tb.stop_server(relay)
        tb.stop_server(mailbox)
    print(f"# load average at end {load_average()}", flush=True)
    med = {}
    for (scenario, impl, placement), rs in runs.items():
        med[(scenario, impl, placement)] = m = median_of(rs, size_of(sources[scenario]) / 2 ** 20)
        print(f"median impl={impl} scenario={scenario} placement={placement} "
              f"rounds={len(rs)} " + tb.fmt(m), flush=True)
    for scenario in sources:
        for placement in placements:
            for impl in impls:
                if impl == "ref" or "ref" not in impls:
                    continue
                a, b = med[(scenario, impl, placement)], med[(scenario, "ref", placement)]
                print(f"ratio scenario={scenario} placement={placement} {impl}/ref "
                      f"mib_per_s={a['mib_per_s'] / b['mib_per_s']:.2f} "
                      f"wall={a['wall_s'] / b['wall_s']:.2f} "
                      f"send_cpu={a['send_cpu_s'] / b['send_cpu_s']:.2f} "
                      f"recv_cpu={a['recv_cpu_s'] / b['recv_cpu_s']:.2f}", flush=True)
                if "setup_s" in a and "setup_s" in b:
                    print(f"waits scenario={scenario} placement={placement} "
                          + " ".join(f"{name} " + " ".join(f"{k}={m[k]:.3f}" for k in
                                                           ("code_s", "setup_s", "close_s")
                                                           if k in m)
                                     for name, m in ((impl, a), ("ref", b))), flush=True)
    # --slope and --floor use the first placement's medians
    best = {(s, i): m for (s, i, p), m in med.items() if p == placements[0]}
    if "quarter" in sources:
        for impl in impls:
            small, large = best[("quarter", impl)], best[("file", impl)]
            parts = {}
            for side in ("send", "recv"):
                fixed, per_gib = split_cpu(small[f"{side}_cpu_s"], large[f"{side}_cpu_s"],
                                           mibs["quarter"], mibs["file"])
                parts[f"{side}_fixed_s"], parts[f"{side}_per_gib_s"] = fixed, per_gib
            best[("split", impl)] = parts
            print(f"split impl={impl} " + tb.fmt(parts), flush=True)
    if args.floor and "file" in sources:
        fl = floor(sources["file"], args.workdir)
        print("floor cpu_s_per_gib " + tb.fmt(fl), flush=True)
        if "ref" in impls:
            # the least CPU a transfer-v2 CLI could spend: a fixed part (ours
            # as measured with --slope, else none) plus the prescribed work
            # and loopback TCP for every byte; a CPU-bound run on the same
            # cores cannot beat the reference by more than their CPU's ratio
            ours = best.get(("split", "ours-v2"), {})
            measured = ours.get("send_fixed_s", 0.0) + ours.get("recv_fixed_s", 0.0)
            # and the least any CLI on the prescribed libraries could have:
            # two processes that only start and import them
            imports = 2 * _floor.import_cpu(os.path.join(tb.VENVS["ours"], "bin", "python"))
            per_gib = fl["v2_send"] + fl["v2_recv"] + fl["loopback_tcp"]
            for scenario in ("file", "dir"):
                if scenario not in sources:
                    continue
                ref = best[(scenario, "ref")]
                ref_cpu = ref["send_cpu_s"] + ref["recv_cpu_s"]
                for fixed_name, fixed in (("ours", measured), ("imports", imports)):
                    least = fixed + size_of(sources[scenario]) / 2 ** 30 * per_gib
                    print(f"ceiling scenario={scenario} fixed={fixed_name} "
                          f"ours-v2/ref mib_per_s<={ref_cpu / least:.2f} "
                          f"wall>={least / ref_cpu:.2f} (ref CPU {ref_cpu:.2f} s, least "
                          f"transfer-v2 CPU {least:.2f} s of which fixed {fixed:.2f} s)",
                          flush=True)
            if "pinned" in placements:
                pinned_ceiling(med[("file", "ref", "pinned")]["wall_s"],
                               size_of(sources["file"]) / 2 ** 30, fl, ours, imports / 2)
        print(f"floor per_gib both sides v2={fl['v2_send'] + fl['v2_recv']:.2f} "
              f"classic={fl['classic_send'] + fl['classic_recv']:.2f}", flush=True)
        print("floor blake2b cpu_s_per_gib " + tb.fmt(_floor.blake2b_variants()), flush=True)
        for name, (cpu, wall) in _floor.receive_variants(args.workdir).items():
            print(f"floor receive way={name} cpu_s_per_gib={cpu:.3f} wall_s_per_gib={wall:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
