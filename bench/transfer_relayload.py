"""Many Transit relay pairs at once, as raw TCP clients (for transfer_bench).

Every pair opens both of its connections at the same moment as every other
pair, sends the sided relay handshake (spec 004 section 6.4 / "relay-v1":
``please relay TOKEN for side SIDE\\n``) and waits for ``ok\\n``; the
handshake latency is from just before connect() to the ``ok``. Then one side
of each pair pushes `nbytes` and the other reads them all.
"""

import asyncio
import secrets
import time

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
