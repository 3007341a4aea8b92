"""Every node finds every node (P2P-D8.3, in full): the
64-node join-grown network of tests/p2p/test_dht.py (k = 8, α = 3), one
FIND_NODE from every node for every other node (4032 lookups), by the same
code as the CI test (tests/p2p/test_dht.py, in four quarters there); this
times it in one process.

  .venv/bin/python bench/p2p_allpairs.py

One line: allpairs n=64 lookups=4032 found=4032 build_s=... lookups_s=...
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from tests.p2p.test_dht import find_every_node, shared_network  # noqa: E402


def main():
    start = time.perf_counter()
    net = shared_network()
    built = time.perf_counter()
    found = list(find_every_node(net, range(len(net.nodes))).values())
    done = time.perf_counter()
    print("allpairs n=%d lookups=%d found=%d build_s=%.1f lookups_s=%.1f"
          % (len(net.nodes), len(found), sum(found), built - start,
             done - built))


if __name__ == "__main__":
    main()
