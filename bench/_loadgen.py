"""The load generator's scenarios, run inside worker processes.

Two scenarios, both what real clients send (Mailbox server protocol, "All
Message Types"):

- `pairs`: closed-loop rendezvous pairs. Each slot runs one pair after
  another: side A connects, binds, allocates, claims, opens, exchanges
  pake/version with B, adds phase "0", releases and closes (mood happy);
  side B learns the nameplate when A has allocated it (as a person reading
  the code would), claims it and mirrors A.
- `idle`: open many bound+open connections (A allocates, both claim and
  open), hold them while the parent measures the server's RSS, then release,
  close and disconnect them all.

A worker is a forked process with its own asyncio loop; it talks to the
parent over a multiprocessing Pipe and reports its own CPU time, so the
report can show the load generator is not the bottleneck.
"""

import asyncio
import os
import resource
import time

from _wsclient import ConnectionLostEarly, HandshakeFailed, ServerError, connect

APPID = "lothar.com/wormhole/text-or-file-xfer"
CLIENT_VERSION = ["python", "0.24.0"]
# Body sizes of a real text transfer: a SPAKE2 message wrapped in JSON, an
# encrypted version dict, an encrypted small payload (Client-to-client
# protocol). Bodies travel hex-encoded, so twice as many characters.
PAKE_BYTES, VERSION_BYTES, PHASE0_BYTES = 80, 100, 100


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _mid():
    # the `id` key the timing tool correlates (Mailbox server protocol,
    # "WebSocket Transport")
    return os.urandom(2).hex()


def _side():
    return os.urandom(5).hex()


def _from_peer(my_side, phase):
    def pred(m):
        return (m.get("type") == "message" and m.get("phase") == phase
                and m.get("side") != my_side)
    return pred


def classify(exc):
    """The failure bucket for one failed pair or connection."""
    if isinstance(exc, ConnectionRefusedError):
        return "connect_refused"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, HandshakeFailed):
        return "handshake"
    if isinstance(exc, ServerError):
        return "error_message"
    if isinstance(exc, (ConnectionLostEarly, ConnectionError)):
        return "connection_lost"
    return "other:" + type(exc).__name__


async def _open_side(host, port, timeout, conns):
    ws = await connect(host, port, timeout)
    conns.append(ws)
    await ws.expect_type("welcome")
    side = _side()
    ws.send({"type": "bind", "appid": APPID, "side": side,
             "client_version": CLIENT_VERSION, "id": _mid()})
    return ws, side


async def _finish_side(ws, nameplate, mailbox):
    ws.send({"type": "release", "nameplate": nameplate, "id": _mid()})
    await ws.expect_type("released")
    ws.send({"type": "close", "mailbox": mailbox, "mood": "happy",
             "id": _mid()})
    await ws.expect_type("closed")
    await ws.close()


async def _side_a(host, port, timeout, conns, nameplate_fut):
    ws, side = await _open_side(host, port, timeout, conns)
    ws.send({"type": "allocate", "id": _mid()})
    nameplate = (await ws.expect_type("allocated"))["nameplate"]
    nameplate_fut.set_result(nameplate)
    ws.send({"type": "claim", "nameplate": nameplate, "id": _mid()})
    mailbox = (await ws.expect_type("claimed"))["mailbox"]
    ws.send({"type": "open", "mailbox": mailbox, "id": _mid()})
    ws.send({"type": "add", "phase": "pake",
             "body": os.urandom(PAKE_BYTES).hex(), "id": _mid()})
    await ws.expect(_from_peer(side, "pake"))
    ws.send({"type": "add", "phase": "version",
             "body": os.urandom(VERSION_BYTES).hex(), "id": _mid()})
    await ws.expect(_from_peer(side, "version"))
    ws.send({"type": "add", "phase": "0",
             "body": os.urandom(PHASE0_BYTES).hex(), "id": _mid()})
    await _finish_side(ws, nameplate, mailbox)


async def _side_b(host, port, timeout, conns, nameplate_fut):
    nameplate = await nameplate_fut
    ws, side = await _open_side(host, port, timeout, conns)
    ws.send({"type": "claim", "nameplate": nameplate, "id": _mid()})
    mailbox = (await ws.expect_type("claimed"))["mailbox"]
    ws.send({"type": "open", "mailbox": mailbox, "id": _mid()})
    ws.send({"type": "add", "phase": "pake",
             "body": os.urandom(PAKE_BYTES).hex(), "id": _mid()})
    await ws.expect(_from_peer(side, "pake"))
    ws.send({"type": "add", "phase": "version",
             "body": os.urandom(VERSION_BYTES).hex(), "id": _mid()})
    await ws.expect(_from_peer(side, "version"))
    await ws.expect(_from_peer(side, "0"))
    await _finish_side(ws, nameplate, mailbox)


async def one_pair(host, port, timeout):
    """Run one rendezvous; raise on any failure (both sockets are aborted)."""
    loop = asyncio.get_running_loop()
    conns = []
    nameplate_fut = loop.create_future()
    a = asyncio.ensure_future(_side_a(host, port, timeout, conns,
                                      nameplate_fut))
    b = asyncio.ensure_future(_side_b(host, port, timeout, conns,
                                      nameplate_fut))
    try:
        await asyncio.wait_for(asyncio.gather(a, b), timeout)
    except BaseException:
        for t in (a, b):
            t.cancel()
        if not nameplate_fut.done():
            nameplate_fut.cancel()
        await asyncio.gather(a, b, return_exceptions=True)
        raise
    finally:
        for ws in conns:
            ws.abort()


async def _pairs_main(p):
    """Slots start pairs until `stop_at`, then finish what is in flight.

    Every pair of the run counts (no window): a saturated server answers in
    waves (all slots start together and finish together), and a window
    shorter than a wave would sample the gaps between them. The parent
    divides by the run's wall time, from `start_at` to the last completion.
    """
    host, port, timeout = p["host"], p["port"], p["timeout"]
    start_at, stop_at = p["start_at"], p["stop_at"]
    latencies = []
    failures = {}
    last_end = [start_at]

    async def slot(i):
        await asyncio.sleep(max(0.0, start_at + i * p["stagger"]
                                - time.monotonic()))
        while time.monotonic() < stop_at:
            began = time.monotonic()
            try:
                await one_pair(host, port, timeout)
            except Exception as e:
                kind = classify(e)
                failures[kind] = failures.get(kind, 0) + 1
                # a failed pair is not retried at once: keeps a broken
                # server from turning the slot into a busy loop
                await asyncio.sleep(0.05)
                continue
            ended = time.monotonic()
            latencies.append(ended - began)
            last_end[0] = max(last_end[0], ended)

    c0 = cpu_seconds()
    await asyncio.gather(*(slot(i) for i in range(p["slots"])))
    return {"latencies": latencies, "failures": failures,
            "cpu": cpu_seconds() - c0, "last_end": last_end[0]}


async def _idle_main(p, pipe):
    host, port, timeout = p["host"], p["port"], p["timeout"]
    npairs = p["pairs"]
    sem = asyncio.Semaphore(p["parallel_opens"])
    held = []  # [(ws, nameplate, mailbox)]
    failures = {}

    deadline = time.monotonic() + p["open_deadline"]
    skipped = [0]

    async def open_pair():
        conns = []  # whatever got connected, to abort on failure
        async with sem:
            if time.monotonic() > deadline:
                # a server this slow would keep the bench for hours: hold
                # what is open and measure that
                skipped[0] += 1
                return
            try:
                a, b, nameplate, mailbox = await asyncio.wait_for(
                    _open_pair(conns), timeout)
            except Exception as e:
                kind = classify(e)
                failures[kind] = failures.get(kind, 0) + 1
                for ws in conns:
                    ws.abort()
                return
            held.append((a, nameplate, mailbox))
            held.append((b, nameplate, mailbox))

    async def _open_pair(conns):
        a, _ = await _open_side(host, port, timeout, conns)
        a.send({"type": "allocate", "id": _mid()})
        nameplate = (await a.expect_type("allocated"))["nameplate"]
        a.send({"type": "claim", "nameplate": nameplate, "id": _mid()})
        mailbox = (await a.expect_type("claimed"))["mailbox"]
        a.send({"type": "open", "mailbox": mailbox, "id": _mid()})
        b, _ = await _open_side(host, port, timeout, conns)
        b.send({"type": "claim", "nameplate": nameplate, "id": _mid()})
        await b.expect_type("claimed")
        b.send({"type": "open", "mailbox": mailbox, "id": _mid()})
        # ping/pong: the server has processed everything before it (Mailbox
        # server protocol, "Connection-Specific (Client-to-Server) Messages":
        # "used ... for synchronization purposes")
        for ws in (a, b):
            ws.send({"type": "ping", "ping": 1, "id": _mid()})
        for ws in (a, b):
            await ws.expect_type("pong")
        return a, b, nameplate, mailbox

    c0 = cpu_seconds()
    w0 = time.monotonic()
    await asyncio.gather(*(open_pair() for _ in range(npairs)))
    open_wall = time.monotonic() - w0
    pipe.send({"held": len(held), "failures": dict(failures),
               "skipped_pairs": skipped[0], "open_wall": open_wall})
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, pipe.recv)  # parent measured RSS

    close_failures = {}

    async def leave(ws, nameplate, mailbox):
        async with sem:
            try:
                await asyncio.wait_for(
                    _finish_side(ws, nameplate, mailbox), timeout)
            except Exception as e:
                kind = classify(e)
                close_failures[kind] = close_failures.get(kind, 0) + 1
            finally:
                ws.abort()

    await asyncio.gather(*(leave(*h) for h in held))
    return {"close_failures": close_failures, "cpu": cpu_seconds() - c0}


def _raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(want, hard)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def loop_runner(name):
    """`asyncio.run` or uvloop's: uvloop (the `bench` extra) halves the
    client's CPU per message, which keeps the generator off the critical
    path on a 2-core machine."""
    if name == "uvloop":
        import uvloop
        return uvloop.run
    return asyncio.run


def default_loop():
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def worker(kind, params, pipe):
    """Entry point of a forked worker process."""
    _raise_nofile()
    run = loop_runner(params.get("loop", "asyncio"))
    try:
        if kind == "pairs":
            result = run(_pairs_main(params))
        else:
            result = run(_idle_main(params, pipe))
        pipe.send(result)
    except Exception as e:  # report, don't hang the parent
        pipe.send({"crash": "{}: {}".format(type(e).__name__, e)})
    finally:
        pipe.close()
