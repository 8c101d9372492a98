"""A fixed-capacity numpy cache (flat kind) with prefill and rollback, its float32 sibling, and twins: the `>=`
capacity bug, kept arrays, and the bonus step written one slot off after a rollback."""
import numpy as np

from kvconform_port import CapacityRefusal, FlatAdapter

from .common import attend, causal, queries, rollback_count, steps


class FlatCache(FlatAdapter):
    """Up to `capacity` steps in preallocated arrays of `dtype`, filled in append order."""

    dtype = np.float64

    def __init__(self, config):
        super().__init__(config)
        capacity, self.d_k, self.d_v = config["capacity"], config["d_k"], config["d_v"]
        # NaN: a stray read of an unfilled row shows
        self._keys = np.full((capacity, self.d_k), np.nan, dtype=self.dtype)
        self._values = np.full((capacity, self.d_v), np.nan, dtype=self.dtype)
        self._len = 0

    def fits(self, n):
        """Whether n more steps fit: an append may end exactly at capacity."""
        return self._len + n <= len(self._keys)

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        n = k.shape[0]
        if not self.fits(n):
            raise CapacityRefusal(f"{self._len} + {n} steps exceed the capacity {len(self._keys)}")
        with np.errstate(over="ignore"):  # a double beyond float32's range is stored as inf, as a cast does
            self._keys[self._len:self._len + n] = k
            self._values[self._len:self._len + n] = v
        self._len += n

    def attend_rows(self, keys, values, q):
        """One attention in the cache's arithmetic (a subclass that stores another format overrides it)."""
        return attend(keys, values, q)

    def decode(self, q):
        return self.attend_rows(self.keys(), self.values(), q)

    def prefill(self, k, v, q):
        q = queries(q, steps(k, v, self.d_k, self.d_v)[0].shape[0], self.d_k)
        before = self._len
        self.append(k, v)  # refused as the append is, before anything changes
        return causal(self.attend_rows, self.keys(), self.values(), q, before)

    def rollback(self, count):
        self._len -= rollback_count(count, self._len)

    def keys(self):
        return self._keys[:self._len]

    def values(self):
        return self._values[:self._len]

    def size(self):
        return self._len


class Flat32Cache(FlatCache):
    """The same cache storing and computing in float32, and saying so in its profile."""

    dtype = np.float32
    profile = {"storage": "f32", "working": "f32"}


class StrictCapacityFlat(FlatCache):
    """Seeded bug (docs/mutants.md, flat-strict-capacity): `>=` for `>`, so the last slot is never used."""

    def fits(self, n):
        return self._len + n < len(self._keys)


class NoCopyFlat(FlatCache):
    """Seeded bug (docs/mutants.md, flat-no-copy): keeps the caller's arrays (views of them) instead of copies."""

    def __init__(self, config):
        super().__init__(config)
        self._kept = []

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        if not self.fits(k.shape[0]):
            raise CapacityRefusal(f"{self._len} + {k.shape[0]} steps exceed the capacity {len(self._keys)}")
        self._kept.append((k, v))
        self._len += k.shape[0]

    def keys(self):
        return np.concatenate([k for k, _ in self._kept] + [self._keys[:0]])

    def values(self):
        return np.concatenate([v for _, v in self._kept] + [self._values[:0]])


class BonusSlotOffFlat(FlatCache):
    """Seeded bug (docs/mutants.md, flat-bonus-slot-off): after a rollback, the next append (the bonus step) writes
    its first row one slot early, over the last accepted one."""

    shifted = False

    def rollback(self, count):
        super().rollback(count)
        self.shifted = count > 0 and self._len > 0

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        if not self.shifted or k.shape[0] == 0:
            return super().append(k, v)
        if not self.fits(k.shape[0]):
            raise CapacityRefusal(f"{self._len} + {k.shape[0]} steps exceed the capacity {len(self._keys)}")
        self._keys[self._len - 1:self._len - 1 + k.shape[0]] = k
        self._values[self._len - 1:self._len - 1 + k.shape[0]] = v
        self._len += k.shape[0]
        self.shifted = False
