"""The DHT (P2P-D7): FIND_NODE / FIND_VALUE lookups, STORE, the answers
to them, and the hourly refresh, replication, republish and expiry."""

import ipaddress

from twisted.internet import defer, task

from . import _keys, _payload
from ._config import ACK, FIND_NODE, FIND_VALUE, NACK, STORE
from ._contacts import Contact
from ._lookup import FoundValue, Lookup


class BadAnswer(Exception):
    """An ACK whose node infos or value do not follow P2P-D5.4/5.5."""


class Dht:

    def __init__(self, identity, subnet, limits, clock, rng, table, links,
                 store):
        self._identity = identity
        self._subnet = subnet
        self._limits = limits
        self._clock = clock
        self._rng = rng
        self._table = table
        self._links = links
        self.store = store
        self._loop = task.LoopingCall(self.tick)
        self._loop.clock = clock
        self.stats = {"lookups": 0, "rounds": 0, "rpcs": 0}

    def start(self):
        self._loop.start(self._limits.replicate_interval, now=False)

    def stop(self):
        if self._loop.running:
            self._loop.stop()

    # -- node infos (P2P-D5.4) -----------------------------------------------

    def contact_from_info(self, info):
        if (not isinstance(info, list) or len(info) != 3
                or not isinstance(info[0], bytes)):
            raise BadAnswer("node info is not [der, host, port]")
        der, host, port = info
        try:
            _keys.check_canonical(der, self._subnet.beta)
        except _keys.NonCanonicalKey:
            raise BadAnswer("non-canonical key in node info") from None
        if host is not None:
            if not isinstance(host, str):
                raise BadAnswer("host is not a string")
            try:
                ipaddress.ip_address(host)
            except ValueError:
                raise BadAnswer("host is not an IP literal") from None
        if port is not None and (not isinstance(port, int)
                                 or isinstance(port, bool)
                                 or not 0 < port < 65536):
            raise BadAnswer("bad port")
        return Contact(der, _keys.truncated_address(der, self._subnet.tau),
                       host, port)

    def _contacts_from(self, infos):
        out = []
        for info in infos[:self._subnet.k]:
            c = self.contact_from_info(info)
            if c.der != self._identity.der:
                out.append(c)
        return out

    # -- lookups (P2P-D7.1, 7.2) -----------------------------------------------

    def _reachable(self, contact):
        return contact.der in self._links.open or contact.listening

    def _initial(self, target):
        known = self._table.closest(target, self._subnet.k)
        return known

    def _request(self, contact, opcode, value):
        d = self._links.connection_to(contact)
        d.addCallback(lambda conn: conn.request(opcode, value))
        return d

    def _find_node_query(self, target_bytes):
        def query(contact):
            d = self._request(contact, FIND_NODE, target_bytes)
            d.addCallback(lambda answer: ("nodes",
                                          self._contacts_from(answer[1:])))
            return d
        return query

    def _find_value_query(self, address, key):
        request = [_keys.address_bytes(address, self._subnet.tau), key]

        def query(contact):
            d = self._request(contact, FIND_VALUE, request)

            def parse(answer):
                if answer[0] == FIND_NODE:
                    return ("nodes", self._contacts_from(answer[1:]))
                if (len(answer) != 4 or answer[1] != key
                        or not isinstance(answer[3], dict)):
                    raise BadAnswer("malformed FIND_VALUE answer")
                return ("value", FoundValue(key, answer[2], answer[3],
                                            contact))
            d.addCallback(parse)
            return d
        return query

    def _run(self, lookup, address):
        self.stats["lookups"] += 1
        self._table.looked_up(address, self._clock.seconds())
        d = lookup.run()

        def count(result):
            self.stats["rounds"] += result.rounds
            self.stats["rpcs"] += result.rpcs
            self._links.fill_outbound()   # P2P-D6.6: re-run at lookup end
            return result
        return d.addCallback(count)

    def find_node(self, address):
        """Iterative FIND_NODE; a Deferred of a LookupResult."""
        target = _keys.address_bytes(address, self._subnet.tau)
        return self._run(Lookup(address, self._subnet.k, self._subnet.alpha,
                                self._initial(address),
                                self._find_node_query(target),
                                self._reachable), address)

    def get(self, key):
        """P2P-D7.2: the value, or None when nobody holds it."""
        local = self.store.get(key)
        if local is not None:
            return defer.succeed(local.value)
        address = _keys.value_address(key, self._subnet.tau)
        d = self._run(Lookup(address, self._subnet.k, self._subnet.alpha,
                             self._initial(address),
                             self._find_value_query(address, key),
                             self._reachable, want_value=True), address)

        def found(result):
            if result.value is None:
                return None
            # cache at the closest queried node that answered without it
            if result.queried_without_value:
                self._store_to(result.queried_without_value[0], key,
                               result.value.value).addErrback(lambda f: None)
            return result.value.value
        return d.addCallback(found)

    def set(self, key, value, publisher=True, keep_local=True):
        """P2P-D7.3: STORE at the k closest; the number of ACKs."""
        self.check_limits(key, value)
        address = _keys.value_address(key, self._subnet.tau)
        d = self._run(Lookup(address, self._subnet.k, self._subnet.alpha,
                             self._initial(address),
                             self._find_node_query(
                                 _keys.address_bytes(address,
                                                     self._subnet.tau)),
                             self._reachable), address)

        def store(result):
            closest = result.closest[:self._subnet.k]
            own = self._identity.address ^ address
            if keep_local and (len(closest) < self._subnet.k or
                               own < closest[-1].address ^ address):
                self.store.put(key, value, self._identity.der, publisher)
            elif publisher:
                self.store.put(key, value, self._identity.der, publisher)
            calls = [self._store_to(c, key, value) for c in closest]
            dl = defer.DeferredList(calls, consumeErrors=True)
            return dl.addCallback(lambda rs: sum(1 for ok, _ in rs if ok))
        return d.addCallback(store)

    def _store_to(self, contact, key, value):
        address = _keys.value_address(key, self._subnet.tau)
        return self._request(contact, STORE, [
            _keys.address_bytes(address, self._subnet.tau), key, value])

    def check_limits(self, key, value):
        if not isinstance(key, bytes) or len(key) > self._limits.max_store_key:
            raise ValueError("key must be bytes of at most %d"
                             % self._limits.max_store_key)
        if len(_payload.pack(value)) > self._limits.max_value:
            raise ValueError("value over %d bytes packed"
                             % self._limits.max_value)

    # -- answering (P2P-D5.5) ----------------------------------------------------

    def _target(self, value):
        """FIND_NODE's bin: a truncated (τ/8) or extended (D) address."""
        if not isinstance(value, bytes):
            return None
        if len(value) == self._subnet.tau // 8:
            return int.from_bytes(value, "big")
        if len(value) == _keys.der_length(self._subnet.beta):
            try:
                _keys.check_canonical(value, self._subnet.beta)
            except _keys.NonCanonicalKey:
                return None
            return _keys.truncated_address(value, self._subnet.tau)
        return None

    def _closest_infos(self, target, requester):
        exclude = {self._identity.der, requester}
        return [c.info() for c in self._table.closest(
            target, self._subnet.k, exclude)]

    def answer_find_node(self, message, value):
        target = self._target(value)
        if target is None:
            return (NACK, [FIND_NODE, "malformed"])
        return (ACK, [FIND_NODE] + self._closest_infos(target, message.sender))

    def _key_request(self, value, arity):
        """[address, key, ...]: address must be hash(key) (P2P-D5.3)."""
        tau = self._subnet.tau
        if (not isinstance(value, list) or len(value) != arity
                or not isinstance(value[0], bytes)
                or not isinstance(value[1], bytes)
                or len(value[0]) != tau // 8
                or int.from_bytes(value[0], "big")
                != _keys.value_address(value[1], tau)):
            return None
        return int.from_bytes(value[0], "big")

    def answer_find_value(self, message, value):
        address = self._key_request(value, 2)
        if address is None:
            return (NACK, [FIND_VALUE, "malformed"])
        key = value[1]
        entry = self.store.get(key)
        if entry is not None:
            return (ACK, [FIND_VALUE, key, entry.value,
                          self.store.metadata(key, self._limits.expiry)])
        return (ACK, [FIND_NODE] + self._closest_infos(address,
                                                       message.sender))

    def answer_store(self, message, value):
        address = self._key_request(value, 3)
        if address is None:
            key = value[1] if (isinstance(value, list) and len(value) > 1
                               and isinstance(value[1], bytes)) else b""
            return (NACK, [STORE, key, "malformed"])
        key, stored = value[1], value[2]
        if (len(key) > self._limits.max_store_key
                or len(_payload.pack(stored)) > self._limits.max_value):
            return (NACK, [STORE, key, "too-large"])
        if not self.store.put(key, stored, message.sender):
            return (NACK, [STORE, key, "full"])
        return (ACK, [STORE, key, self.store.metadata(key,
                                                      self._limits.expiry)])

    def welcome(self, contact):
        """P2P-D7.3: a new contact gets each local value for which it is
        among the k closest known and self the closest."""
        for key in self.store.keys():
            address = _keys.value_address(key, self._subnet.tau)
            closest = self._table.closest(address, self._subnet.k)
            if contact not in closest:
                continue
            own = self._identity.address ^ address
            if all(own < c.address ^ address for c in closest
                   if c.der != contact.der):
                entry = self.store.get(key)
                self._store_to(contact, key, entry.value).addErrback(
                    lambda f: None)

    # -- the hourly tick (P2P-D7.4) ----------------------------------------------

    def tick(self):
        limits = self._limits
        self.store.expire(limits.expiry)
        for key in self.store.to_republish(limits.republish_interval):
            entry = self.store.get(key)
            self.set(key, entry.value).addErrback(lambda f: None)
        for key in self.store.stale(limits.replicate_interval):
            entry = self.store.get(key)
            if entry.published_at is None:
                # replication: STOREs to the others, no local refresh
                self.set(key, entry.value, publisher=False,
                         keep_local=False).addErrback(lambda f: None)
        self.refresh()

    def refresh(self):
        """A lookup of a random address in each bucket idle for an hour."""
        now = self._clock.seconds()
        for index in range(self._subnet.tau):
            touched = self._table.last_touched[index]
            if touched is None or now - touched < \
                    self._limits.refresh_interval:
                continue
            low = self._rng.getrandbits(index) if index else 0
            address = self._identity.address ^ ((1 << index) | low)
            self.find_node(address).addErrback(lambda f: None)

