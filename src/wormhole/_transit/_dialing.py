"""Bounded, staggered dialing for one transfer (docs/security.md,
"Connection attempts").

A peer chooses our hints: without a bound it could list thousands of
addresses and have us open a socket to each at once. Every outbound
connection of one Transit ``connect()`` (or one Dilation generation)
therefore goes through a DialQueue: at most ``max_concurrent`` dials are in
progress, two dials start at least ``stagger`` seconds apart, and a dial
that neither connects nor fails within ``dial_timeout`` is cancelled so it
gives its slot back. A dial's slot is free again once TCP (or WebSocket,
or Tor) is connected or failed; what happens after that is the connection
machine's business.

Relay dials are "urgent": they go before queued direct dials, so a peer's
flood of dead direct hints cannot delay the relay behind it.

The machine is on an injected clock (``IReactorTime``); the in-flight
count and the queue are its data, the pacing timer its state.
"""

import collections

from automat import MethodicalMachine
from twisted.python import log

from .._automat_private import trace_hook

MAX_CONCURRENT_DIALS = 8
DIAL_STAGGER = 0.05    # seconds between two dial starts
DIAL_TIMEOUT = 15.0    # seconds one dial may take before it is cancelled
# through Tor a dial builds a circuit first (and an onion service needs
# its rendezvous): give it longer
TOR_DIAL_TIMEOUT = 60.0


def dial_queue_for(clock, tor=None):
    """The DialQueue of one connect() or one Dilation generation."""
    return DialQueue(clock, dial_timeout=TOR_DIAL_TIMEOUT if tor is not None
                     else DIAL_TIMEOUT)


class DialQueue:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, clock, max_concurrent=MAX_CONCURRENT_DIALS,
                 stagger=DIAL_STAGGER, dial_timeout=DIAL_TIMEOUT):
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, not {max_concurrent}")
        self._clock = clock
        self._max = max_concurrent
        self._stagger = stagger
        self._dial_timeout = dial_timeout
        self._urgent = collections.deque()
        self._normal = collections.deque()
        self._in_flight = {}  # Deferred -> its timeout DelayedCall
        self._pacer = None

    # -- public ------------------------------------------------------------

    def add(self, start, urgent=False):
        """Queue one dial: ``start()`` begins it and returns the Deferred of
        the connection (the caller's own callbacks already attached).
        ``urgent`` dials (relays) go before queued ordinary ones."""
        self._queued(start, urgent)

    def in_flight(self):
        return len(self._in_flight)

    def queued(self):
        return len(self._urgent) + len(self._normal)

    # -- states --------------------------------------------------------------

    @m.state(initial=True)
    def S0_ready(self): pass

    @m.state()
    def S1_pacing(self): pass

    @m.state()
    def S2_stopped(self): pass

    # -- inputs --------------------------------------------------------------

    @m.input()
    def _queued(self, start, urgent): pass

    @m.input()
    def _started(self): pass

    @m.input()
    def _paced(self): pass

    @m.input()
    def _released(self): pass

    @m.input()
    def stop(self):
        """Drop every queued dial (those in progress are the caller's to
        cancel) and start nothing more."""

    # -- outputs -------------------------------------------------------------

    @m.output()
    def _enqueue(self, start, urgent):
        (self._urgent if urgent else self._normal).append(start)

    @m.output()
    def _start_one(self):
        # last output of its transition: it re-enters with _started before
        # the dial begins, so a dial that fails at once finds us pacing
        if len(self._in_flight) >= self._max:
            return
        queue = self._urgent or self._normal
        if not queue:
            return
        start = queue.popleft()
        self._started()
        d = start()
        self._in_flight[d] = self._clock.callLater(self._dial_timeout, self._time_out, d)
        d.addBoth(self._dial_over, d)

    def _time_out(self, d):
        log.msg(f"transit: a dial took longer than {self._dial_timeout} s; cancelling it")
        d.cancel()

    def _dial_over(self, result, d):
        timer = self._in_flight.pop(d, None)
        if timer is not None:
            if timer.active():
                timer.cancel()
            self._released()
        return None  # the caller's own callbacks already saw the result

    @m.output()
    def _arm_pacer(self):
        self._pacer = self._clock.callLater(self._stagger, self._paced)

    @m.output()
    def _cancel_pacer(self):
        if self._pacer is not None and self._pacer.active():
            self._pacer.cancel()
        self._pacer = None

    @m.output()
    def _drop_queue(self):
        self._urgent.clear()
        self._normal.clear()
        in_flight, self._in_flight = self._in_flight, {}
        for timer in in_flight.values():
            if timer.active():
                timer.cancel()

    S0_ready.upon(_queued, enter=S0_ready, outputs=[_enqueue, _start_one])
    S0_ready.upon(_released, enter=S0_ready, outputs=[_start_one])
    S0_ready.upon(_started, enter=S1_pacing, outputs=[_arm_pacer])
    S0_ready.upon(stop, enter=S2_stopped, outputs=[_drop_queue])

    S1_pacing.upon(_queued, enter=S1_pacing, outputs=[_enqueue])
    S1_pacing.upon(_released, enter=S1_pacing, outputs=[])
    S1_pacing.upon(_paced, enter=S0_ready, outputs=[_start_one])
    S1_pacing.upon(stop, enter=S2_stopped, outputs=[_cancel_pacer, _drop_queue])

    S2_stopped.upon(_queued, enter=S2_stopped, outputs=[])
    S2_stopped.upon(_released, enter=S2_stopped, outputs=[])
    S2_stopped.upon(_paced, enter=S2_stopped, outputs=[])
    S2_stopped.upon(stop, enter=S2_stopped, outputs=[])
