"""Contacts, the k-buckets and the Node Info Cache (P2P-D6.5), the Seen
set (P2P-D6.8). Plain data structures: the node decides what to dial or
ping."""

import collections

import attrs

from . import _keys


@attrs.frozen
class Contact:
    """What a node knows of another: node info (P2P-D5.4) + its address."""
    der: bytes
    address: int
    host: str | None = None
    port: int | None = None

    @property
    def listening(self):
        return self.host is not None and self.port is not None

    def info(self):
        """Node info = [der, host | nil, port | nil] (P2P-D5.4)."""
        return [self.der, self.host, self.port]


class LRU:
    """An ordered map bounded to `size`, least recently used first."""

    def __init__(self, size):
        self._size = size
        self._items = collections.OrderedDict()

    def touch(self, key, value=True):
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __contains__(self, key):
        return key in self._items

    def get(self, key):
        return self._items.get(key)

    def pop(self, key):
        return self._items.pop(key, None)

    def newest_first(self):
        return list(reversed(self._items.values()))

    def __len__(self):
        return len(self._items)


class SeenSet(LRU):
    """Signatures of flooded messages, LRU of 4096, evicting the least
    recently received (P2P-D6.8; P2P mesh protocol, "Seen SHOUTs")."""

    def check_and_add(self, signature):
        """True if new; either way it becomes the most recent."""
        new = signature not in self
        self.touch(signature)
        return new


class RoutingTable:
    """τ fixed buckets, each an LRU list of ≤ k contacts, least recently
    seen first (P2P-D6.5: no splitting)."""

    def __init__(self, own_address, k, tau):
        self.own = own_address
        self.k = k
        self.tau = tau
        self._buckets = [collections.OrderedDict() for _ in range(tau)]
        # last lookup into each bucket's range (Kademlia's refresh clock)
        self.last_touched = [None] * tau
        self.failures = collections.Counter()

    def bucket_of(self, address):
        return _keys.bucket_index(self.own, address)

    def capacity(self, index):
        """min(k, 2^b): how many addresses bucket b can ever hold."""
        return min(self.k, 1 << index)

    def is_full(self, address):
        index = self.bucket_of(address)
        return len(self._buckets[index]) >= self.capacity(index)

    def offer(self, contact, now):
        """Insert or refresh. Returns None when done, or the least recently
        seen contact of a full bucket (the caller pings it)."""
        index = self.bucket_of(contact.address)
        if index < 0:
            return None
        bucket = self._buckets[index]
        if self.last_touched[index] is None:
            self.last_touched[index] = now
        if contact.address in bucket:
            bucket[contact.address] = merged(bucket[contact.address], contact)
            bucket.move_to_end(contact.address)
            self.failures.pop(contact.address, None)
            return None
        if len(bucket) < self.capacity(index):
            bucket[contact.address] = contact
            return None
        return next(iter(bucket.values()))

    def looked_up(self, address, now):
        """A lookup of `address` refreshes its bucket's range."""
        index = self.bucket_of(address)
        if index >= 0:
            self.last_touched[index] = now

    def get(self, address):
        index = self.bucket_of(address)
        if index < 0:
            return None
        return self._buckets[index].get(address)

    def remove(self, address):
        index = self.bucket_of(address)
        if index >= 0:
            self._buckets[index].pop(address, None)
        self.failures.pop(address, None)

    def bucket(self, index):
        return list(self._buckets[index].values())

    def contacts(self):
        return [c for b in self._buckets for c in b.values()]

    def closest(self, target, count, exclude=()):
        """The `count` known contacts closest to `target` (XOR), nearest
        first (Kademlia's FIND_NODE answer)."""
        found = [c for c in self.contacts() if c.der not in exclude]
        found.sort(key=lambda c: c.address ^ target)
        return found[:count]


def merged(old, new):
    """The newer sighting ``new`` of a contact, keeping ``old``'s known
    listening address when ``new`` has none (a peer met on a new link
    before its ANNOUNCE, P2P-D6.2); ``old`` may be None."""
    if old is None:
        return new
    if new.host is None and old.host is not None:
        return attrs.evolve(new, host=old.host, port=old.port)
    return new
