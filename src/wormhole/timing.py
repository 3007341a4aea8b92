"""Timing records for ``--dump-timing`` (spec 004 5.4 ``timing``).

Each event has a name, a start time, an optional finish time and details;
the RendezvousConnector records ``server_tx``/``server_rx`` of every message
so ``misc/dump-timing.py`` can line up both clients and the server.
"""

import json
import time


class Event:
    def __init__(self, name, when, **details):
        self._name = name
        self._start = time.time() if when is None else when
        self._stop = None
        self._details = details

    def detail(self, **details):
        self._details.update(details)
        return self

    def finish(self, when=None, **details):
        self._stop = time.time() if when is None else when
        self._details.update(details)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type:
            self.finish(exception=str(exc))
        else:
            self.finish()

    def to_json(self):
        return {"name": self._name, "start": self._start, "stop": self._stop,
                "details": self._details}


class DebugTiming:
    def __init__(self):
        self._events = []

    def add(self, name, when=None, **details):
        ev = Event(name, when, **details)
        self._events.append(ev)
        return ev

    def events(self):
        return [ev.to_json() for ev in self._events]

    def write(self, fn, stderr):
        with open(fn, "wt") as f:
            json.dump(self.events(), f, indent=1)
            f.write("\n")
        print(f"Timing data written to {fn}", file=stderr)
