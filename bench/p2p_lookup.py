"""p2pmesh DHT lookups against bmuller/kademlia 2.2.3 (P2P-D9.2, the lookup
benchmark; results in docs/performance.md, "Peer-to-peer mesh (`p2pmesh`)").

Ours: n join-grown nodes on the in-memory network (tests/p2p/_network.py,
one Clock; a stopped node refuses connections at once). Theirs: n
`Server`s on 127.0.0.1 UDP in one asyncio loop, in .venv-kademlia
(bench/p2p_kademlia_peer.py; created here on first use with
`pip install kademlia==2.2.3`). Same k and α; the same measurements on both
sides, all lookups of a scenario run concurrently:

  find_node   rounds and RPCs per lookup of a random address
  find_value  rounds and RPCs per get of a stored key (a get served from
              the local store counts 0), success = the value came back
  churn       0 %, 10 %, 25 % of the nodes stopped, then measured again

  .venv/bin/python bench/p2p_lookup.py [--sizes 16,64,256,1024] [--k 20]
        [--alpha 3] [--lookups 40] [--no-bmuller]
        [--ell 8] [--quiet-joins] [--join-batch 1]

n = 1024 in about 8 minutes: --ell 1 --quiet-joins --join-batch 64 (64
concurrent joins, then 31 s for their transient links to close; the
lookups measured afterwards are the same code either way).

One JSON line per (impl, n, churn), then a ratio line per (n, churn):
  ratio n=64 churn=0.1 find_node_rounds=0.93 find_node_rpcs=1.05 ...
        success_ours=1.0 success_bmuller=1.0
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys

from cryptography.hazmat.primitives import serialization

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "src"))

from tests.p2p import _fixtures  # noqa: E402
from tests.p2p._network import grow  # noqa: E402

from p2pmesh import SubnetConfig  # noqa: E402
from p2pmesh._keys import generate_private_key  # noqa: E402

KADEMLIA_VENV = os.path.join(REPO, ".venv-kademlia")
KEY_CACHE = "/tmp/p2pmesh-bench-keys.pem"


def fill_key_pool(count):
    """The test key pool, filled from a cache file (RSA keygen is ~0.1 s
    per key; 1024 nodes would spend minutes on it every run)."""
    keys = []
    if os.path.exists(KEY_CACHE):
        with open(KEY_CACHE, "rb") as f:
            for block in f.read().split(b"\n\n"):
                if block.strip():
                    keys.append(serialization.load_pem_private_key(
                        block + b"\n", None))
    while len(keys) < count:
        keys.append(generate_private_key(2048))
    with open(KEY_CACHE, "wb") as f:
        f.write(b"\n".join(k.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()) for k in keys))
    _fixtures._POOL[:] = keys


def concurrently(net, nodes, calls):
    """Start every call, settle once; (results, rounds/call, rpcs/call)."""
    before = [dict(n.dht.stats) for n in nodes]
    out = [None] * len(calls)
    for i, call in enumerate(calls):
        call().addBoth(lambda r, i=i: out.__setitem__(i, r))  # call order
    net.settle()
    rounds = sum(n.dht.stats["rounds"] - b["rounds"]
                 for n, b in zip(nodes, before, strict=False))
    rpcs = sum(n.dht.stats["rpcs"] - b["rpcs"]
               for n, b in zip(nodes, before, strict=False))
    return out, rounds / len(calls), rpcs / len(calls)


def ours(n, k, alpha, lookups, seed, ell=8, quiet=False, batch=1):
    rng = random.Random(seed)
    net = grow(n, seed, SubnetConfig(k=k, alpha=alpha, ell=ell), quiet,
               batch)
    keys = [("key-%d" % i).encode() for i in range(lookups)]
    for key in keys:
        net.nodes[rng.randrange(n)].set(key, key.decode() + "-value")
    net.settle()
    live = list(range(n))
    for churn in (0.0, 0.10, 0.25):
        stop = int(n * churn) - (n - len(live))
        for i in rng.sample(live, max(0, stop)):
            net.nodes[i].stop()
            live.remove(i)
        net.settle()
        nodes = [net.nodes[i] for i in live]
        _, fn_rounds, fn_rpcs = concurrently(net, nodes, [
            # defaults drawn per lookup as the list is built: the binding is the point
            (lambda node=net.nodes[rng.choice(live)],  # noqa: B008
             target=rng.getrandbits(256): node.dht.find_node(target))  # noqa: B008
            for _ in range(lookups)])
        askers = [net.nodes[rng.choice(live)] for _ in keys]
        values, fv_rounds, fv_rpcs = concurrently(net, nodes, [
            (lambda node=node, key=key: node.get(key))
            for node, key in zip(askers, keys, strict=False)])
        ok = sum(1 for key, v in zip(keys, values, strict=False)
                 if v == key.decode() + "-value")
        yield {"find_node_rounds": fn_rounds, "find_node_rpcs": fn_rpcs,
               "find_value_rounds": fv_rounds, "find_value_rpcs": fv_rpcs,
               "success": ok / len(keys), "impl": "ours", "n": n, "k": k,
               "alpha": alpha, "churn": churn, "log2_n": math.log2(n),
               "ell": ell, "quiet_joins": quiet, "join_batch": batch}


def bmuller(n, k, alpha, lookups, seed):
    python = os.path.join(KADEMLIA_VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", KADEMLIA_VENV],
                       check=True)
        subprocess.run([os.path.join(KADEMLIA_VENV, "bin", "pip"), "install",
                        "-q", "kademlia==2.2.3"], check=True)
    out = subprocess.run(
        [python, os.path.join(HERE, "p2p_kademlia_peer.py"), str(n), str(k),
         str(alpha), str(lookups), str(seed)],
        check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="16,64,256,1024")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--alpha", type=int, default=3)
    parser.add_argument("--lookups", type=int, default=40)
    parser.add_argument("--no-bmuller", action="store_true")
    parser.add_argument("--quiet-joins", action="store_true",
                        help="ours: 31 s after each batch of joins, so "
                             "transient links close and the next joins "
                             "flood over ℓ links only")
    parser.add_argument("--ell", type=int, default=8,
                        help="ours: persistent outbound links; lookups do "
                             "not use them, but every join floods an "
                             "ANNOUNCE over them ((2ℓ−1)n+1 copies), which "
                             "dominates growing large networks")
    parser.add_argument("--join-batch", type=int, default=1,
                        help="ours: nodes joining concurrently (each "
                             "through a node of an earlier batch)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    fill_key_pool(max(sizes))
    for n in sizes:
        mine = list(ours(n, args.k, args.alpha, args.lookups, seed=n,
                         ell=args.ell, quiet=args.quiet_joins,
                         batch=args.join_batch))
        for row in mine:
            print(json.dumps(row), flush=True)
        if args.no_bmuller:
            continue
        theirs = bmuller(n, args.k, args.alpha, args.lookups, seed=n)
        for row in theirs:
            print(json.dumps(row), flush=True)
        for a, b in zip(mine, theirs, strict=False):
            ratios = " ".join(
                "%s=%.2f" % (f, a[f] / b[f] if b[f] else float("nan"))
                for f in ("find_node_rounds", "find_node_rpcs",
                          "find_value_rounds", "find_value_rpcs"))
            print("ratio n=%d churn=%.2f %s success_ours=%.3f "
                  "success_bmuller=%.3f" % (n, a["churn"], ratios,
                                            a["success"], b["success"]),
                  flush=True)


if __name__ == "__main__":
    main()
