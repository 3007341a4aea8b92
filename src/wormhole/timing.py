"""Timing records for ``--dump-timing`` (Client API, "Wormhole Parameters": ``timing``).

A ``DebugTiming`` keeps a list of events, each with a name, a local start
time, an optional local finish time and a dict of details.  The bundle it
writes is that list, as JSON: the same shape the reference writes, so
``misc/dump-timing.py`` reads bundles from either implementation.

Who records what (the names ``wormhole._timeline`` looks for):

- ``wormhole`` (``create()``): this client's ``side`` and ``appid``, at the
  moment the wormhole was made (the start of the "connect" phase);
- ``command`` (the CLI): the ``role``, ``sender`` or ``receiver``;
- ``ws_send`` / ``ws_receive`` (the RendezvousConnector): every message to
  and from the Mailbox server with its local time.  Outbound messages carry
  a random ``id``; the server copies it into its ``ack`` and direct
  responses, with its own ``server_rx``/``server_tx`` clock (Mailbox server
  protocol, "WebSocket Transport": "misc/dump-timing.py is a debug tool ..."),
  which is how the
  tool lines the clients up with the server;
- ``pake1``/``pake2`` (Key), ``got verifier``/``got version`` (Boss),
  ``transit connect`` (Transit), ``transfer`` (the CLI): milestones.

Times come from an injectable clock (``time.time`` by default) so tests can
drive it.

What is kept is bounded (docs/security.md, "Mailbox client"):
``ws_receive`` holds every message the server delivers, including repeats
of a phase that the Mailbox machine drops, and the CLI records always. A
peer adding the same phase again and again through a server without a
per-mailbox limit grew our memory by its body's size each time. Past
``max_events`` events or ``max_bytes`` of their text, events are no longer
kept (they still work as context managers), and the bundle ends with one
``timing records dropped`` event that counts them.
"""

import json
import time

from zope.interface import implementer

from ._interfaces import ITiming

# far above a transfer's few dozen events and a long Dilation session's
# handful per reconnection
MAX_EVENTS = 100_000
MAX_BYTES = 16 * 1024 * 1024
EVENT_COST = 200  # what an event counts besides its details' text


def _text_size(details):
    """The length of the strings in ``details`` and in the dicts it holds
    (a server message is one), as a cheap estimate of what they keep."""
    size = 0
    for value in details.values():
        if isinstance(value, dict):
            value = " ".join(v for v in value.values() if isinstance(v, str))
        if isinstance(value, (str, bytes)):
            size += len(value)
    return size


class Event:
    """One timed thing; ``finish()`` it when it has a duration."""

    def __init__(self, name, start, clock, details):
        self._name = name
        self._start = start
        self._stop = None
        self._clock = clock
        self._details = details

    def detail(self, **details):
        self._details.update(details)
        return self

    def finish(self, when=None, **details):
        self._stop = self._clock() if when is None else when
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


@implementer(ITiming)
class DebugTiming:
    """The recorder handed to ``create(timing=...)``.

    ``add(name, when=None, **details)`` returns the ``Event`` (a context
    manager too: ``with timing.add("pake1"): ...`` times the block).
    """

    def __init__(self, clock=time.time, max_events=MAX_EVENTS, max_bytes=MAX_BYTES):
        self._clock = clock
        self._events = []
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._bytes = 0
        self._dropped = 0

    def add(self, name, when=None, **details):
        start = self._clock() if when is None else when
        ev = Event(name, start, self._clock, details)
        cost = EVENT_COST + _text_size(details)
        if len(self._events) < self._max_events and self._bytes + cost <= self._max_bytes:
            self._events.append(ev)
            self._bytes += cost
        else:
            self._dropped += 1
        return ev

    def events(self):
        kept = [ev.to_json() for ev in self._events]
        if self._dropped:
            kept.append({"name": "timing records dropped", "start": self._clock(),
                         "stop": None, "details": {
                             "events": self._dropped,
                             "limits": {"events": self._max_events, "bytes": self._max_bytes}}})
        return kept

    def write(self, fn, stderr):
        with open(fn, "wt") as f:
            json.dump(self.events(), f, indent=1)
            f.write("\n")
        print(f"Timing data written to {fn}", file=stderr)
