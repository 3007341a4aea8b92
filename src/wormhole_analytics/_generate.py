"""Realistic synthetic usage events, for tests and ``bench/``.

Heavy tails where real traffic has them: waiting times and sizes are
log-normal/Pareto, most wormholes are happy, a few lonely, rare scary and
crowded; several servers, app ids and client versions. Deterministic for
a seed."""

import json
import os
import random

from wormhole_ops.events import build_event, day_of

APPS = ["lothar.com/wormhole/text-or-file-xfer", "tahoe-lafs.org/invite",
        "example.org/app", "fowl/port-forward"]
VERSIONS = [("python", "0.24.0"), ("python", "0.23.0"), ("python", "0.18.0"),
            ("go", "v1.0.7"), ("rust", "0.7.5"), ("js", "0.4.0")]
MOODS = (["happy"] * 85 + ["lonely"] * 8 + ["errory"] * 2 + ["scary"] * 2
         + ["pruney"] * 1 + ["crowded"] * 1 + ["quiet"] * 1)
RELAY = (["happy"] * 80 + ["lonely"] * 8 + ["errory"] * 3 + ["impatient"] * 2
         + ["redundant"] * 5 + ["jilted"] * 2)


def events(n, seed=0, start=1767225600, days=7, servers=3):
    """Yield ``n`` event dicts spread over ``days`` UTC days."""
    rng = random.Random(seed)
    span = days * 86400
    for _i in range(n):
        server = f"server-{rng.randrange(servers)}"
        started = start + rng.random() * span
        waiting = rng.lognormvariate(2.0, 1.5)  # heavy tail, median ~7 s
        total = waiting + rng.paretovariate(1.2)
        r = rng.random()
        if r < 0.35:
            mood = rng.choice(RELAY)
            nbytes = 0 if mood != "happy" else int(
                rng.paretovariate(0.9) * 2000)
            yield build_event(server, "relay", round(started, 3),
                              round(total, 3),
                              None if mood == "lonely" else round(waiting, 3),
                              mood, total_bytes=nbytes)
        elif r < 0.5:
            side = f"{rng.getrandbits(64):016x}"
            yield build_event(server, "bind", round(started, 3), None, None,
                              None, app_id=rng.choice(APPS),
                              clients=[(side, list(rng.choice(VERSIONS)))])
        else:
            mood = rng.choice(MOODS)
            kind = "mailbox" if r < 0.8 else "nameplate"
            yield build_event(server, kind, round(started, 3),
                              round(total, 3),
                              None if mood == "lonely" else round(waiting, 3),
                              mood, app_id=rng.choice(APPS))


def write_files(folder, n, seed=0, days=7, servers=3, bad_every=0):
    """Write ``n`` events as daily files under ``folder``; every
    ``bad_every``-th line (if set) is malformed. Returns the paths."""
    os.makedirs(folder, exist_ok=True)
    handles = {}
    try:
        for i, e in enumerate(events(n, seed, days=days, servers=servers)):
            day = day_of(e["started"])
            if day not in handles:
                handles[day] = open(os.path.join(  # noqa: SIM115 (closed below)
                    folder, f"usage-events-{day}.jsonl"), "w")
            line = json.dumps(e, separators=(",", ":"))
            if bad_every and i % bad_every == bad_every - 1:
                line = line[: len(line) // 2]
            handles[day].write(line + "\n")
    finally:
        for h in handles.values():
            h.close()
    return sorted(os.path.join(folder, f) for f in os.listdir(folder))
