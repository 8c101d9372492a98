"""A host or disk tier of a tiered cache: slots of one tier block of rows each, entries by chain, evicted LRU."""
import itertools

import numpy as np

from kvconform_port import CapacityRefusal


class Entry:
    """A tier block in a slot: pending (being copied into) until it is ready, pinned while a transfer reads it."""

    def __init__(self, slot):
        self.slot, self.ready, self.pins, self.used = slot, False, 0, 0


class TierStore:
    """`slots` slots of `rows` rows, each row packed as its key then its value (the tier's own layout, which only
    this class reads). Entries are keyed by their chain, the tuple of every token up to the tier block's end.
    `may_evict(entry, room)` says whether a ready or pending entry may go: to an evict op, or (`room`) to make room
    for a store, a load or a put; the cache's policy, so that a twin can break it."""

    def __init__(self, slots, rows, d_k, d_v, may_evict):
        self.d_k, self.may_evict = d_k, may_evict
        self.data = np.full((slots, rows, d_k + d_v), np.nan)
        self.free = list(range(slots - 1, -1, -1))
        self.entries = {}
        self.hit_rows = 0  # rows its loads brought (host: to the device; disk: to the host)
        self.clock = itertools.count(1)  # an entry's use, for least recently used

    def ready(self, chain):
        entry = self.entries.get(chain)
        return entry is not None and entry.ready

    def touch(self, entry):
        entry.used = next(self.clock)

    def victims(self, room=True, keep=()):
        """The chains that may be evicted, never one of `keep`."""
        return [c for c, e in self.entries.items() if self.may_evict(e, room) and c not in keep]

    def has_room(self, n, keep=()):
        return len(self.free) + len(self.victims(True, keep)) >= n

    def evict_lru(self, room=True, keep=()):
        chain = min(self.victims(room, keep), key=lambda c: self.entries[c].used)
        self.free.append(self.entries.pop(chain).slot)

    def add(self, chain, keep=()):
        """A new pending entry of `chain`: a free slot, else the least recently used evictable entry's."""
        if not self.free:
            if not self.victims(True, keep):
                raise CapacityRefusal("the tier has no free slot and no evictable entry")
            self.evict_lru(True, keep)
        self.entries[chain] = Entry(self.free.pop())
        return self.entries[chain]

    def drop(self, chain):
        """The entry leaves the tier and its slot is free again."""
        self.free.append(self.entries.pop(chain).slot)

    def fill(self, entry, k, v):
        """The entry holds rows k (rows, d_k) and v (rows, d_v) and is ready, most recently used."""
        self.data[entry.slot, :, :self.d_k], self.data[entry.slot, :, self.d_k:] = k, v
        entry.ready = True
        self.touch(entry)

    def rows(self, entry):
        """The entry's keys and values, as copies."""
        packed = self.data[entry.slot]
        return packed[:, :self.d_k].copy(), packed[:, self.d_k:].copy()

    def counts(self):
        ready = [e for e in self.entries.values() if e.ready]
        pinned = sum(e.pins > 0 for e in ready)
        return {"free": len(self.free), "cached": len(ready) - pinned, "pinned": pinned,
                "pending": len(self.entries) - len(ready), "hit_rows": self.hit_rows}
