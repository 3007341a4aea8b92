"""Connection management (P2P-D6.3-6.7): accepting and dialing, one
connection per pair, the outbound choice bounded by ℓ, transient links,
idle pings, eviction pings and the Node Info Cache."""

from twisted.internet import defer
from twisted.internet.protocol import Factory
from twisted.python import log
from twisted.python.failure import Failure
from zope.interface import implementer

from . import _keys
from ._config import ANNOUNCE, PING
from ._connection import Connection, IConnectionOwner
from ._contacts import LRU, Contact, merged

# P2P-D6.7: a failed contact leaves its bucket after 3 consecutive failures
MAX_FAILURES = 3


class _InboundFactory(Factory):

    def __init__(self, links):
        self._links = links

    def buildProtocol(self, addr):
        return self._links.build(outbound=False)


class _OutboundFactory(Factory):

    def __init__(self, links, expected_key):
        self._links = links
        self._expected = expected_key

    def buildProtocol(self, addr):
        return self._links.build(outbound=True, expected_key=self._expected)


@implementer(IConnectionOwner)
class Links:
    """All links of one node. `node` receives verified messages."""

    def __init__(self, node, identity, subnet, limits, clock,
                 endpoint_factory, rng, table, cache_size):
        self._node = node
        self._identity = identity
        self._subnet = subnet
        self._limits = limits
        self._clock = clock
        self._endpoint_factory = endpoint_factory
        self._rng = rng
        self._table = table
        self.cache = LRU(cache_size)     # address → Contact (P2P-D6.5)
        self.connections = set()         # every live Connection
        self.open = {}                   # peer DER → open Connection
        self._waiters = {}               # Connection → [Deferred]
        self._dialing = {}               # (host, port) → Deferred
        self._pinging = set()            # buckets with an eviction ping
        self._idle_calls = {}            # transient Connection → timer
        self._all_closed = []            # Deferreds for all_closed()
        self._backoff = {}               # DER → (not before, last delay)
        self._refill_call = None
        self.inbound_factory = _InboundFactory(self)
        self.stopping = False
        # counters for tests and benchmarks: opcode → messages, bytes
        self.sent_messages = {}
        self.sent_bytes = 0

    # -- building connections -------------------------------------------------

    def build(self, outbound, expected_key=None):
        if not outbound and len(self.connections) >= \
                self._limits.max_connections:
            return None   # P2P-D6.4: closed before the handshake
        conn = Connection(self._identity, self._subnet, self._limits,
                          self._clock, self, outbound, expected_key)
        self.connections.add(conn)
        return conn

    def dial(self, host, port, expected_key=None, transient=False):
        """A Deferred of an open Connection to (host, port); one dial per
        address at a time."""
        if expected_key is not None and expected_key in self.open:
            return defer.succeed(self.open[expected_key])
        where = (host, port)
        if where in self._dialing:
            d = defer.Deferred()
            self._dialing[where].append(d)
            return d
        self._dialing[where] = []
        endpoint = self._endpoint_factory(host, port)
        d = endpoint.connect(_OutboundFactory(self, expected_key))
        d.addTimeout(self._limits.dial_timeout, self._clock)   # P2P-D6.7

        def connected(conn):
            conn.transient = transient
            waiter = defer.Deferred()
            # the link's own handshake timeout bounds this wait
            self._waiters.setdefault(conn, []).append(waiter)
            return waiter

        def done(result):
            for waiter in self._dialing.pop(where, []):
                _chain(result, waiter)
            return result
        d.addCallback(connected)
        d.addBoth(done)
        return d

    def connection_to(self, contact, transient=True):
        """An open link to `contact`: the existing one, or a dial."""
        conn = self.open.get(contact.der)
        if conn is not None:
            return defer.succeed(conn)
        if not contact.listening:
            return defer.fail(NoAddress(contact))
        return self.dial(contact.host, contact.port, contact.der, transient)

    # -- IConnectionOwner -----------------------------------------------------

    def connection_open(self, conn):
        existing = self.open.get(conn.peer_key)
        if existing is not None and existing is not conn:
            keep, drop = self._keep_one(existing, conn)
            self.open[conn.peer_key] = keep
            self._retire(drop)
            self._fire_waiters(drop, keep)
            if keep is conn:
                self._fire_waiters(conn, conn)
            return
        self.open[conn.peer_key] = conn
        self._backoff.pop(conn.peer_key, None)
        peer_address = _keys.truncated_address(conn.peer_key,
                                               self._subnet.tau)
        self._node.saw_peer(Contact(conn.peer_key, peer_address))
        # P2P-D6.2: a directed ANNOUNCE tells an acceptor our listening port
        host, port = self._node.advertised()
        conn.send(ANNOUNCE, [host, port])
        if conn.transient:
            self._arm_idle(conn)
        self._fire_waiters(conn, conn)

    def _retire(self, conn):
        """P2P-D6.3: the other link closes without a message. Requests
        already in flight on it still get their answers: it takes no new
        ones (it left `open`) and closes once idle like a transient link."""
        conn.transient = True
        self._arm_idle(conn)

    def _keep_one(self, a, b):
        """Both sides keep the link dialed by the smaller address."""
        def dialer(c):
            if c.outbound:
                return self._identity.address
            return _keys.truncated_address(c.peer_key, self._subnet.tau)
        if dialer(b) < dialer(a):
            return b, a
        return a, b

    def _fire_waiters(self, conn, result):
        for waiter in self._waiters.pop(conn, []):
            waiter.callback(result)

    def connection_closed(self, conn):
        self.connections.discard(conn)
        if not self.connections:
            waiters, self._all_closed = self._all_closed, []
            for d in waiters:
                d.callback(None)
        timer = self._idle_calls.pop(conn, None)
        if timer is not None and timer.active():
            timer.cancel()
        for waiter in self._waiters.pop(conn, []):
            waiter.errback(LinkClosed())
        if conn.peer_key is not None and self.open.get(conn.peer_key) is conn:
            del self.open[conn.peer_key]
            if not self.stopping:
                self._node.link_lost(conn)

    def message_received(self, conn, message, value):
        if conn.transient:
            self._arm_idle(conn)
        return self._node.dispatch(conn, message, value)

    def whisper_answer(self, conn, message, value):
        self._node.whisper_answer(conn, message, value)

    def refused(self, conn, message, reason):
        log.msg("p2pmesh: dropped opcode %d: %s" % (message.opcode, reason))

    def request_failed(self, conn):
        if conn.peer_key is not None:
            self._node.contact_failed(conn.peer_key)

    def count_sent(self, conn, opcode, size):
        self.sent_messages[opcode] = self.sent_messages.get(opcode, 0) + 1

    def count_bytes(self, conn, size):
        self.sent_bytes += size

    # -- outbound slots (P2P-D6.4, 6.6) -----------------------------------------

    def persistent_outbound(self):
        return [c for c in self.open.values()
                if c.outbound and not c.transient]

    def fill_outbound(self):
        """Walk buckets from the farthest inwards, one random listening
        unconnected contact per bucket per pass, then the cache newest
        first, until ℓ persistent outbound links (P2P-D6.6)."""
        if self.stopping:
            return
        for conn in list(self.open.values()):
            self.promote(conn)
        wanted = self._subnet.ell - len(self.persistent_outbound()) \
            - len(self._dialing)
        if wanted <= 0:
            return
        chosen = []
        now = self._clock.seconds()
        taken = set(self.open) | {c.expected_key for c in self.connections}
        taken |= {der for der, (when, _) in self._backoff.items()
                  if when > now}
        buckets = [[c for c in self._table.bucket(i)
                    if c.listening and c.der not in taken]
                   for i in range(self._subnet.tau - 1, -1, -1)]
        while len(chosen) < wanted and any(buckets):
            for b in buckets:
                if b and len(chosen) < wanted:
                    pick = b.pop(self._rng.randrange(len(b)))
                    chosen.append(pick)
        for contact in self.cache.newest_first():
            if len(chosen) >= wanted:
                break
            if contact.listening and contact.der not in taken and \
                    contact not in chosen:
                chosen.append(contact)
        for contact in chosen:
            d = self.dial(contact.host, contact.port, contact.der)
            d.addErrback(self._dial_failed, contact)

    def promote(self, conn):
        """A transient link takes a free outbound slot (P2P-D6.4)."""
        if conn.transient and conn.outbound and \
                len(self.persistent_outbound()) < self._subnet.ell:
            conn.transient = False
            timer = self._idle_calls.pop(conn, None)
            if timer is not None and timer.active():
                timer.cancel()

    def _dial_failed(self, failure, contact):
        self._node.contact_failed(contact.der)
        self.cache.pop(contact.address)   # P2P-D6.5: drops failed dials
        # P2P-D6.7: redial backoff 1 s × 1.5, capped at 60 s
        last = self._backoff.get(contact.der)
        delay = 1.0 if last is None else min(60.0, last[1] * 1.5)
        self._backoff[contact.der] = (self._clock.seconds() + delay, delay)
        if self._refill_call is None and not self.stopping:
            self._refill_call = self._clock.callLater(delay, self._refill)

    def _refill(self):
        self._refill_call = None
        self.fill_outbound()

    def _arm_idle(self, conn):
        # P2P-D6.4: transient links close 30 s after their last request
        timer = self._idle_calls.get(conn)
        if timer is not None and timer.active():
            timer.reset(self._limits.transient_idle)
            return
        self._idle_calls[conn] = self._clock.callLater(
            self._limits.transient_idle, self._idle_expired, conn)

    def _idle_expired(self, conn):
        self._idle_calls.pop(conn, None)
        if conn.transient:
            conn.close()

    def ping_idle(self):
        """P2P-D6.7: PING every link silent for 60 s."""
        now = self._clock.seconds()
        for conn in list(self.open.values()):
            if now - conn.last_received >= self._limits.idle_ping:
                conn.request(PING, None).addErrback(lambda f: None)

    # -- eviction pings (P2P-D6.5) ----------------------------------------------

    def eviction_ping(self, oldest, newcomer):
        """Ping a full bucket's least recently seen contact, one at a time."""
        index = self._table.bucket_of(oldest.address)
        if index in self._pinging:
            self._cache_sighting(newcomer)
            return
        self._pinging.add(index)
        d = self.connection_to(oldest)
        d.addCallback(lambda conn: conn.request(PING, None))

        # the newcomer as known when the PING ends: its ANNOUNCE may have
        # come meanwhile (into the cache, above) with the address its first
        # sighting (a new link) lacked; putting the stale copy back left
        # contacts without an address in the cache and the buckets,
        # unreachable to every lookup
        def answered(_):
            self._table.offer(oldest, self._clock.seconds())
            self._cache_sighting(newcomer)

        def failed(f):
            self._table.remove(oldest.address)
            latest = merged(self.cache.pop(newcomer.address), newcomer)
            self.cache.touch(oldest.address, oldest)
            self._table.offer(latest, self._clock.seconds())
        d.addCallbacks(answered, failed)
        d.addBoth(lambda _: self._pinging.discard(index))

    def _cache_sighting(self, contact):
        self.cache.touch(contact.address, merged(self.cache.get(contact.address), contact))

    def close_all(self):
        self.stopping = True
        if self._refill_call is not None and self._refill_call.active():
            self._refill_call.cancel()
        for timer in self._idle_calls.values():
            if timer.active():
                timer.cancel()
        self._idle_calls.clear()
        for conn in list(self.connections):
            conn.close()


    def all_closed(self):
        """A Deferred that fires once no link is left."""
        if not self.connections:
            return defer.succeed(None)
        d = defer.Deferred()
        self._all_closed.append(d)
        return d


class NoAddress(Exception):
    """The contact accepts no connections (node info host/port nil)."""


class LinkClosed(Exception):
    """The link closed before its handshake completed."""


def _chain(result, d):
    if isinstance(result, Failure):
        d.errback(result)
    else:
        d.callback(result)
