"""Transit through a relay over WebSocket beside TCP, in one run (results
in docs/performance.md, "Transit over WebSocket").

Three file transfers of the same file, every byte through a relay
(``--no-listen`` on both sides), each a fresh CLI pair on our Mailbox server:

  ours-ws    our CLI on both ends, ``--transit-helper ws://`` to our relay
             (started with ``--websocket``)
  ours-tcp   our CLI on both ends, ``--transit-helper tcp:`` to our relay
  ref-tcp    the reference 0.24 CLI through the reference relay 0.5 on TCP

Reported per transfer: wall time, CPU seconds per GiB of each CLI and of the
relay, and peak RSS of each CLI; then the ratios the issue asks for
(WebSocket CPU per GiB over TCP's, each side, target <= 1.5).

Runs in a loopback-only network namespace (re-executes itself under
``unshare -n``; needs root), as bench/transfer_bench.py does.

  .venv/bin/python bench/transit_ws_bench.py [--size-mib 1024] [--rounds N]
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _netns  # noqa: E402
import _procstat  # noqa: E402
import transfer_bench as tb  # noqa: E402
from _ports import free_port, wait_listening  # noqa: E402


def start_ws_relay():
    """Our twistd transitrelay with a TCP and a WebSocket port."""
    port, ws_port = free_port(), free_port()
    args = ["transitrelay", f"--port=tcp:{port}:interface=127.0.0.1",
            f"--websocket=tcp:{ws_port}:interface=127.0.0.1",
            f"--websocket-url=ws://127.0.0.1:{ws_port}/"]
    p = subprocess.Popen([os.path.join(tb.VENVS["ours"], "bin", "twistd"), "-n", "--pidfile=",
                          "--logfile=/dev/null"] + args, cwd="/tmp", env=tb.child_env("ours"),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_listening(ws_port, p, "our relay")
    return p, port, ws_port


def one(impl, scenario, url, src):
    if scenario == "ours-ws":
        relay, _, ws_port = start_ws_relay()
        helper = f"ws://127.0.0.1:{ws_port}/"
        rport = None
    else:
        relay, rport = tb.start_server(impl, "relay")
        helper = None
    try:
        cpu0 = _procstat.cpu_seconds(relay.pid)
        r = tb.run_transfer(impl, url, rport, src, True, transit_helper=helper)
        r["relay_cpu_s"] = _procstat.cpu_seconds(relay.pid) - cpu0
    finally:
        ru = tb.stop_server(relay)
    r["relay_rss_mib"] = ru["rss_mib"]
    gib = os.path.getsize(src) / 2 ** 30
    for k in ("send", "recv", "relay"):
        r[f"{k}_cpu_s_per_gib"] = r[f"{k}_cpu_s"] / gib
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat; the cheapest round (send+recv CPU) goes into the ratios")
    args = ap.parse_args()
    _netns.reexec_in_namespace(__file__, "TRANSIT_WS_BENCH_NETNS")
    src = tb.make_source(args.size_mib * 2 ** 20)
    mailbox, mport = tb.start_server("ours", "mailbox")
    url = f"ws://127.0.0.1:{mport}/v1"
    best = {}
    try:
        plan = [("ours", "ours-ws"), ("ours", "ours-tcp"), ("ref", "ref-tcp")]
        for impl, scenario in plan * args.rounds:
            print(f"# {scenario}", file=sys.stderr, flush=True)
            r = one(impl, scenario, url, src)
            print(f"transfer scenario={scenario} mib={args.size_mib} " + tb.fmt(r), flush=True)
            cost = r["send_cpu_s"] + r["recv_cpu_s"]
            if (scenario not in best
                    or cost < best[scenario]["send_cpu_s"] + best[scenario]["recv_cpu_s"]):
                best[scenario] = r
    finally:
        tb.stop_server(mailbox)
    ws, tcp, ref = best["ours-ws"], best["ours-tcp"], best["ref-tcp"]
    for side in ("send", "recv", "relay"):
        k = f"{side}_cpu_s_per_gib"
        print(f"ratio {side}_cpu_per_gib ws/tcp={ws[k] / tcp[k]:.2f} "
              f"tcp/ref={tcp[k] / ref[k]:.2f} ws/ref={ws[k] / ref[k]:.2f}", flush=True)
    for side in ("send", "recv"):
        k = f"{side}_rss_mib"
        print(f"ratio {side}_rss ws/tcp={ws[k] / tcp[k]:.2f}", flush=True)


if __name__ == "__main__":
    main()
