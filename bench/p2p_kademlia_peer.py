"""bmuller/kademlia 2.2.3 (the PyPI `kademlia`), measured the way
bench/p2p_lookup.py measures ours. Runs in its own venv, never imported by
the project:

  .venv-kademlia/bin/python bench/p2p_kademlia_peer.py N K ALPHA LOOKUPS SEED

n `Server`s on 127.0.0.1 UDP in one asyncio loop, each bootstrapped from a
random earlier one; RPCs counted by a protocol subclass set as
`Server.protocol_class`, rounds by counting `SpiderCrawl._find` calls.
Prints one JSON object per scenario (churn 0, 10 %, 25 %).
"""

import asyncio
import json
import logging
import random
import socket
import sys

from kademlia import crawling
from kademlia.network import Server
from kademlia.node import Node
from kademlia.protocol import KademliaProtocol

COUNTS = {"rpcs": 0, "rounds": 0}


class CountingProtocol(KademliaProtocol):

    async def call_find_node(self, node_to_ask, node_to_find):
        COUNTS["rpcs"] += 1
        return await super().call_find_node(node_to_ask, node_to_find)

    async def call_find_value(self, node_to_ask, node_to_find):
        COUNTS["rpcs"] += 1
        return await super().call_find_value(node_to_ask, node_to_find)


class CountingServer(Server):
    protocol_class = CountingProtocol


_original_find = crawling.SpiderCrawl._find


async def _counted_find(self, rpcmethod):
    COUNTS["rounds"] += 1
    return await _original_find(self, rpcmethod)


crawling.SpiderCrawl._find = _counted_find


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def lookup(server, target_id, k, alpha):
    """One FIND_NODE lookup, seeded as Server.get/set seed theirs."""
    node = Node(target_id)
    nearest = server.protocol.router.find_neighbors(node)
    if not nearest:
        return []
    spider = crawling.NodeSpiderCrawl(server.protocol, node, nearest, k,
                                      alpha)
    return await spider.find()


async def counted(coroutines):
    """Run concurrently (dead peers cost 5 s timeouts each); returns the
    results and the rounds and RPCs per coroutine."""
    before = dict(COUNTS)
    results = await asyncio.gather(*coroutines)
    n = len(coroutines)
    return results, ((COUNTS["rounds"] - before["rounds"]) / n,
                     (COUNTS["rpcs"] - before["rpcs"]) / n)


async def measure(servers, k, alpha, lookups, rng, live, keys):
    """FIND_NODE of random ids; FIND_VALUE (get) of the stored keys from
    random live nodes, where success = the value came back."""
    _, (rounds, rpcs) = await counted([
        lookup(servers[rng.choice(live)], rng.getrandbits(160).to_bytes(
            20, "big"), k, alpha) for _ in range(lookups)])
    gets = [(servers[rng.choice(live)], key) for key in keys]
    values, (get_rounds, get_rpcs) = await counted(
        [server.get(key) for server, key in gets])
    ok = sum(1 for (server, key), v in zip(gets, values, strict=False)
             if v == key.decode() + "-value")
    return {"find_node_rounds": rounds, "find_node_rpcs": rpcs,
            "find_value_rounds": get_rounds, "find_value_rpcs": get_rpcs,
            "success": ok / len(keys)}


async def main(n, k, alpha, lookups, seed):
    logging.disable(logging.CRITICAL)
    rng = random.Random(seed)
    servers, ids, ports = [], [], []
    for i in range(n):
        server = CountingServer(ksize=k, alpha=alpha)
        port = free_udp_port()
        await server.listen(port, interface="127.0.0.1")
        if i:
            j = rng.randrange(i)
            await server.bootstrap([("127.0.0.1", ports[j])])
        servers.append(server)
        ids.append(server.node.id)
        ports.append(port)
    keys = [("key-%d" % i).encode() for i in range(lookups)]
    await asyncio.gather(*[servers[rng.randrange(n)].set(
        key, key.decode() + "-value") for key in keys])
    live = list(range(n))
    for churn in (0.0, 0.10, 0.25):
        stop = int(n * churn) - (n - len(live))
        for i in rng.sample(live, max(0, stop)):
            servers[i].stop()
            live.remove(i)
        result = await measure(servers, k, alpha, lookups, rng, live, keys)
        result.update(impl="bmuller", n=n, k=k, alpha=alpha, churn=churn)
        print(json.dumps(result), flush=True)
    for i in live:
        servers[i].stop()


if __name__ == "__main__":
    n, k, alpha, lookups, seed = (int(x) for x in sys.argv[1:6])
    asyncio.run(main(n, k, alpha, lookups, seed))
