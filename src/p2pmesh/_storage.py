"""Values held for the DHT with their metadata (P2P-D5.5, P2P-D7.3-7.4)."""

import attrs


@attrs.define
class Entry:
    value: object
    stored_at: float        # last STORE (or local set) arrival
    stored_by: bytes        # that STORE's From DER
    published_at: float | None = None  # set when this node is the publisher


class ValueStore:
    """key bytes → Entry; bounded count (P2P-D0: ≤ 65 536 entries)."""

    def __init__(self, clock, max_entries):
        self._clock = clock
        self._max = max_entries
        self._entries = {}

    def put(self, key, value, stored_by, publisher=False):
        """Last arrival wins (P2P-D7.3). False when full."""
        now = self._clock.seconds()
        old = self._entries.get(key)
        if old is None and len(self._entries) >= self._max:
            return False
        published = now if publisher else (old.published_at if old else None)
        self._entries[key] = Entry(value, now, stored_by, published)
        return True

    def get(self, key):
        return self._entries.get(key)

    def metadata(self, key, expiry):
        """{"age", "expires_in", "stored_by"} (P2P-D5.5)."""
        entry = self._entries[key]
        age = self._clock.seconds() - entry.stored_at
        return {"age": age, "expires_in": max(0.0, expiry - age),
                "stored_by": entry.stored_by}

    def keys(self):
        return list(self._entries)

    def expire(self, expiry):
        """Drop values with no STORE for `expiry` seconds (P2P-D7.4); a
        publisher's own values stay until it stops."""
        now = self._clock.seconds()
        for key, entry in list(self._entries.items()):
            if entry.published_at is None and now - entry.stored_at >= expiry:
                del self._entries[key]

    def stale(self, interval):
        """Keys not STOREd here within `interval` (replication, P2P-D7.4)."""
        now = self._clock.seconds()
        return [k for k, e in self._entries.items()
                if now - e.stored_at >= interval]

    def to_republish(self, interval):
        now = self._clock.seconds()
        return [k for k, e in self._entries.items()
                if e.published_at is not None
                and now - e.published_at >= interval]

    def __len__(self):
        return len(self._entries)
