# -*- test-case-name: tests.unit.relay.test_pairing -*-
"""Which connection is relayed to which (Transit protocol, "Relay Handshake").

"The relay waits for a second connection that uses the same token. When
this happens, the relay sends ok\\n to both". With sides (the newer
handshake), two connections of the same side never pair: a connection
pairs with the oldest waiting one of another side (or with any, if either
gave no side). Observed on the reference relay and kept here: connections
of the same side wait side by side; once one of them is paired, the others
waiting on that token are dropped (mood ``redundant``); a connection that
comes after a pair was made starts waiting afresh. Which of several
same-side connections is paired is not fixed on the reference; here it is
always the oldest.
"""

from zope.interface import implementer

from ._interfaces import IPair, IPairing, IRelayConnection, IUsageRecorder


@implementer(IPairing)
class Pairing:
    def __init__(self, clock, usage, limits):
        self._clock = clock
        self._usage = IUsageRecorder(usage)
        self._limits = limits
        # token -> [(side, conn)], oldest first
        self._waiting = {}
        self._token_of = {}  # waiting conn -> its token
        self._pairs = set()

    def add(self, conn, token, side):
        conn = IRelayConnection(conn)
        waiting = self._waiting.setdefault(token, [])
        # everyone waiting on a token has the same side (or none): anyone
        # who could pair with them already has. The oldest match wins.
        match = next((i for i, (other_side, _) in enumerate(waiting)
                      if side is None or other_side is None
                      or other_side != side), None)
        if match is None:
            if len(waiting) >= self._limits.max_waiting_per_token:
                conn.crowded()
                return
            waiting.append((side, conn))
            self._token_of[conn] = token
            return
        _, other = waiting.pop(match)
        del self._waiting[token]
        for _, c in waiting + [(None, other)]:
            del self._token_of[c]
        pair = Pair(self, self._clock, self._usage, self._limits,
                    other, conn)
        self._pairs.add(pair)
        other.paired(pair, conn)
        conn.paired(pair, other)
        for _, loser in waiting:
            loser.displaced()

    def remove(self, conn):
        token = self._token_of.pop(conn, None)
        if token is None:
            return
        kept = [(s, c) for (s, c) in self._waiting[token] if c is not conn]
        if kept:
            self._waiting[token] = kept
        else:
            del self._waiting[token]

    def stats(self):
        waiting = sum(len(w) for w in self._waiting.values())
        connected = 2 * len(self._pairs)
        incomplete = sum(p.total_bytes for p in self._pairs)
        return connected, waiting, incomplete

    def pair_finished(self, pair):
        self._pairs.discard(pair)


@implementer(IPair)
class Pair:
    """Two connections relaying. Counts the bytes, runs the idle timer,
    and writes the pair's one usage record (mood ``happy``) when both are
    gone: ``started`` is when the first connected, ``waiting_time`` how
    long until the second handshake completed the pair, ``total_time``
    until the last one closed."""

    def __init__(self, pairing, clock, usage, limits, first, second):
        self._pairing = pairing
        self._clock = clock
        self._usage = usage
        self._idle = limits.idle_timeout
        self._conns = [first, second]
        self._gone = []
        now = clock.seconds()
        self.started = min(first.started, second.started)
        self.waiting_time = now - self.started
        self.total_bytes = 0
        self._timer = None
        self._rearm()

    def _rearm(self):
        if self._idle is None:
            return
        if self._timer is not None and self._timer.active():
            self._timer.reset(self._idle)
        else:
            self._timer = self._clock.callLater(self._idle, self._idle_out)

    def _idle_out(self):
        # Transit protocol, "Relay Handshake": no half-close; an idle pair
        # is closed as a whole
        self._timer = None
        for conn in list(self._conns):
            conn.timed_out()

    def _other(self, conn):
        a, b = self._conns
        return b if conn is a else a

    def moved(self, conn, data):
        self.total_bytes += len(data)
        self._rearm()
        self._other(conn).forward(data)

    def count(self, nbytes):
        # the glues' own path (no machine per chunk): only the count and
        # the idle timer
        self.total_bytes += nbytes
        self._rearm()

    def lost(self, conn):
        if conn in self._gone:
            return
        self._gone.append(conn)
        if len(self._gone) == 1:
            # "When either connection is lost, the other will be closed"
            self._other(conn).partner_lost()
            return
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self._pairing.pair_finished(self)
        now = self._clock.seconds()
        self._usage.record(started=self.started,
                           total_time=now - self.started,
                           waiting_time=self.waiting_time,
                           total_bytes=self.total_bytes, mood="happy")
