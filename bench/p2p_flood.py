"""p2pmesh flooding on the in-memory network (P2P-D9.1, the flood benchmark;
results in docs/performance.md, "Peer-to-peer mesh (`p2pmesh`)"): messages per
broadcast against the seed's formulas, hops against the lag bound and the hub
model, bytes per node per broadcast with and without batching and compression.

Topologies: complete when n ≤ 2ℓ+1 (saturated), else random graphs with
exactly ℓ outbound links per node (limited), as in tests/p2p.

  .venv/bin/python bench/p2p_flood.py [--sizes 8,16,...] [--ells 1,2,4,8]

One line per figure:
  flood n=64 ell=2 kind=limited m=193 formula=193 t=256 lag=9 lag_bound=31
        hub_lag=33 bandwidth_ratio=3.016 formula_ratio=3.016
  bytes n=64 ell=2 mode=batched+zlib per_node_per_broadcast=...
"""

import argparse
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from tests.p2p._network import Network  # noqa: E402
from tests.p2p.test_flooding import complete, random_outbound  # noqa: E402

from p2pmesh import LocalLimits, SubnetConfig  # noqa: E402
from p2pmesh._config import SHOUT  # noqa: E402


def build(n, ell, limits, seed):
    if n <= 2 * ell + 1:
        kind, edges = "saturated", complete(n)
    else:
        kind, edges = "limited", random_outbound(n, ell, random.Random(seed))
    net = Network(n, config=SubnetConfig(ell=max(ell, n // 2 + 1)),
                  limits=limits, seed=seed)
    net.start_all()
    for i, j in edges:
        net.connect(i, j)
    net.settle()
    return kind, net


def one_broadcast(net, origin, payload, count=1):
    """m, max hops, bytes written for `count` SHOUTs sent in one turn."""
    first = {}
    start = net.rounds
    for i, node in enumerate(net.nodes):
        node._callbacks.pop(SHOUT, None)
        node.on(SHOUT, lambda s, v, i=i: first.setdefault(
            i, net.rounds - start + 1))
    net.reset_counts()
    before = sum(n.links.sent_bytes for n in net.nodes)
    for k in range(count):
        net.nodes[origin].shout([payload, k])
    net.settle()
    sent_bytes = sum(n.links.sent_bytes for n in net.nodes) - before
    return net.sent(SHOUT), max(first.values()), sent_bytes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="8,16,32,64,128,256")
    parser.add_argument("--ells", default="1,2,4,8")
    parser.add_argument("--bytes-max-n", type=int, default=64,
                        help="largest n for the compression runs")
    args = parser.parse_args()
    payload = "x" * 200
    for ell in [int(x) for x in args.ells.split(",")]:
        for n in [int(x) for x in args.sizes.split(",")]:
            kind, net = build(n, ell, LocalLimits(compression=()), seed=n)
            t = net.connections_total()
            m, lag, single_bytes = one_broadcast(net, 0, payload)
            formula = {"saturated": (n - 1) ** 2,
                       "limited": (2 * ell - 1) * n + 1}[kind]
            lag_bound = math.ceil(max((n - 2) / ell, 1))
            hub_lag = math.ceil((n - 1) / ell) + 1
            print("flood n=%d ell=%d kind=%s m=%d formula=%d t_minus_n_plus_1"
                  "=%d lag=%d lag_bound=%d hub_lag=%d bandwidth_ratio=%.3f "
                  "formula_ratio=%.3f"
                  % (n, ell, kind, m, formula, t - n + 1, lag, lag_bound,
                     hub_lag, m / n, formula / n), flush=True)
            _, _, batch_bytes = one_broadcast(net, 0, payload, count=10)
            print("bytes n=%d ell=%d mode=single per_node_per_broadcast=%.0f"
                  % (n, ell, single_bytes / n), flush=True)
            print("bytes n=%d ell=%d mode=batched10 per_node_per_broadcast"
                  "=%.0f" % (n, ell, batch_bytes / n / 10), flush=True)
            net.stop_all()
            if n <= args.bytes_max_n:
                _, znet = build(n, ell, LocalLimits(compression=(4,)),
                                seed=n)
                _, _, zbytes = one_broadcast(znet, 0, payload, count=10)
                print("bytes n=%d ell=%d mode=batched10+zlib "
                      "per_node_per_broadcast=%.0f"
                      % (n, ell, zbytes / n / 10), flush=True)
                znet.stop_all()


if __name__ == "__main__":
    main()
