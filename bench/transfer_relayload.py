"""Many Transit relay pairs at once, as raw TCP clients (for transfer_bench).

Every pair opens both of its connections at the same moment as every other
pair, sends the sided relay handshake (Transit protocol, "Relay Handshake" /
"relay-v1": ``please relay TOKEN for side SIDE\\n``) and waits for ``ok\\n``;
the handshake latency is from just before connect() to the ``ok``. Then one
side of each pair pushes `nbytes` and the other reads them all.

Run alone, it compares relay variants side by side, round after round
(ours as shipped, ours with --no-splice, the reference 0.5), each a fresh
`twistd -n transitrelay` on 127.0.0.1 with its default listen queue:

    .venv/bin/python bench/transfer_relayload.py [--pairs 100] [--mb-each 20]
        [--rounds 3] [--variants ours,ours-nosplice,ref] [--pyspy DIR]

One line per figure (`relayload variant=... relay_cpu_s_per_gb=...`), then
the best round's ratio of each variant to the reference. No namespace is
needed: raw clients and relays only ever use 127.0.0.1.
"""

import argparse
import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _procstat  # noqa: E402
from _ports import free_port  # noqa: E402

CHUNK = 64 * 1024
SLOW_S = 1.0  # a handshake slower than this counts as slow


async def _handshake(port, token, side, lat):
    t0 = time.monotonic()
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(f"please relay {token} for side {side}\n".encode())
    ok = await asyncio.wait_for(r.readexactly(3), 60)
    if ok != b"ok\n":
        raise ValueError(f"relay said {ok!r}")
    lat.append(time.monotonic() - t0)
    return r, w


async def _pair(port, nbytes, lat, failures, moved):
    token = secrets.token_hex(32)
    try:
        (_, wa), (rb, wb) = await asyncio.gather(
            _handshake(port, token, secrets.token_hex(8), lat),
            _handshake(port, token, secrets.token_hex(8), lat))
    except Exception as e:  # counted, not raised: the figure is how many fail
        failures.append(repr(e))
        return
    block = b"\xa5" * CHUNK

    async def push():
        left = nbytes
        while left:
            n = min(left, CHUNK)
            wa.write(block[:n])
            left -= n
            await wa.drain()

    async def pull():
        got = 0
        while got < nbytes:
            data = await rb.read(1 << 20)
            if not data:
                break
            got += len(data)
        return got

    try:
        _, got = await asyncio.gather(push(), asyncio.wait_for(pull(), 600))
        moved.append(got)
        if got != nbytes:
            failures.append(f"short read {got}/{nbytes}")
    except Exception as e:
        failures.append(repr(e))
    finally:
        for w in (wa, wb):
            w.close()


async def run(port, pairs, nbytes):
    lat, failures, moved = [], [], []
    t0 = time.monotonic()
    await asyncio.gather(*[_pair(port, nbytes, lat, failures, moved) for _ in range(pairs)])
    wall = time.monotonic() - t0
    lat.sort()

    def pct(p):
        return 1000 * lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")

    return {"hs_p50_ms": pct(0.50), "hs_p99_ms": pct(0.99), "hs_max_ms": pct(1.0),
            "slow_handshakes": sum(1 for x in lat if x > SLOW_S),
            "failures": len(failures), "bytes_relayed": sum(moved), "wall_s": wall}


# --- standalone: variants side by side

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_VENV = os.environ.get("WORMHOLE_REFERENCE_VENV") or os.path.join(REPO, ".venv-ref")
VARIANTS = {  # name -> (venv, extra transitrelay arguments)
    "ours": (os.path.join(REPO, ".venv"), []),
    "ours-nosplice": (os.path.join(REPO, ".venv"), ["--no-splice"]),
    "ref": (REF_VENV, []),
}


def _start_relay(variant):
    venv, extra = VARIANTS[variant]
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    p = subprocess.Popen([os.path.join(venv, "bin", "twistd"), "-n", "--pidfile=",
                          "--logfile=/dev/null", "transitrelay",
                          f"--port=tcp:{port}:interface=127.0.0.1"] + extra,
                         cwd="/tmp", env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    for _ in range(400):
        try:
            with open("/proc/net/tcp") as f:
                if any(f":{port:04X} 00000000:0000 0A" in line for line in f):
                    return p, port
        except OSError:
            pass
        time.sleep(0.05)
    p.kill()
    raise SystemExit(f"{variant} relay did not start: {p.stderr.read().decode()}")


def _hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _one(variant, pairs, nbytes, pyspy_dir=None):
    relay, port = _start_relay(variant)
    spy = None
    try:
        if pyspy_dir:
            os.makedirs(pyspy_dir, exist_ok=True)
            spy = subprocess.Popen(["py-spy", "record", "--native", "--idle", "-r", "200",
                                    "-f", "raw", "-o",
                                    os.path.join(pyspy_dir, f"{variant}.txt"),
                                    "--pid", str(relay.pid)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        cpu0 = _procstat.cpu_seconds(relay.pid)
        load = asyncio.run(run(port, pairs, nbytes))
        load["relay_cpu_s"] = _procstat.cpu_seconds(relay.pid) - cpu0
        load["relay_rss_mib"] = _hwm_mib(relay.pid)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(30)
        relay.terminate()
        relay.wait(30)
    gb = load["bytes_relayed"] / 1e9
    load["relay_cpu_s_per_gb"] = load["relay_cpu_s"] / gb if gb else float("nan")
    load["loadavg_1m"] = os.getloadavg()[0]
    return load


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--mb-each", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="ours,ours-nosplice,ref")
    ap.add_argument("--pyspy", metavar="DIR",
                    help="one extra round per variant under py-spy (raw folded stacks)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    best = {}
    for rnd in range(args.rounds):
        for v in variants:
            r = _one(v, args.pairs, args.mb_each * 10**6)
            print(f"relayload variant={v} round={rnd + 1} pairs={args.pairs} "
                  f"mb_each={args.mb_each} " + " ".join(
                      f"{k}={x:.3f}" if isinstance(x, float) else f"{k}={x}"
                      for k, x in r.items()), flush=True)
            if v not in best or r["relay_cpu_s_per_gb"] < best[v]["relay_cpu_s_per_gb"]:
                best[v] = r
    if "ref" in best:
        for v in variants:
            if v != "ref":
                print(f"ratio variant={v} relay_cpu_per_gb {v}/ref="
                      f"{best[v]['relay_cpu_s_per_gb'] / best['ref']['relay_cpu_s_per_gb']:.2f}",
                      flush=True)
    if args.pyspy:
        for v in variants:
            _one(v, args.pairs, args.mb_each * 10**6, pyspy_dir=args.pyspy)


if __name__ == "__main__":
    main()
