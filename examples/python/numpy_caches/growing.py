"""A numpy cache without capacity (growing kind) that reserves storage in whole steps, and a doubling twin."""
import numpy as np

from kvconform_port import GrowingAdapter

from .common import attend, causal, queries, rollback_count, steps


class GrowingCache(GrowingAdapter):
    """Rows in arrays that are reallocated, when an append does not fit, to the fewest whole steps of
    `step` rows that hold every row (mlx-lm's KVCache grows this way)."""

    dtype = np.float64

    def __init__(self, config):
        super().__init__(config)
        self.step, self.d_k, self.d_v = config["step"], config["d_k"], config["d_v"]
        self._keys, self._values = np.empty((0, self.d_k), self.dtype), np.empty((0, self.d_v), self.dtype)
        self._len = 0

    def reserve_for(self, rows):
        """The rows of storage to hold `rows` rows."""
        return -(-rows // self.step) * self.step

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        end = self._len + k.shape[0]
        if end > len(self._keys):
            reserved = self.reserve_for(end)
            grown_k = np.full((reserved, self.d_k), np.nan, dtype=self.dtype)
            grown_v = np.full((reserved, self.d_v), np.nan, dtype=self.dtype)
            grown_k[:self._len], grown_v[:self._len] = self.keys(), self.values()
            self._keys, self._values = grown_k, grown_v
        self._keys[self._len:end], self._values[self._len:end] = k, v
        self._len = end

    def keys(self):
        return self._keys[:self._len]

    def values(self):
        return self._values[:self._len]

    def size(self):
        return self._len

    def reserved_rows(self):
        return len(self._keys)

    def attend_rows(self, keys, values, q):
        return attend(keys, values, q)

    def decode(self, q):
        return self.attend_rows(self.keys(), self.values(), q)

    def prefill(self, k, v, q):
        q = queries(q, steps(k, v, self.d_k, self.d_v)[0].shape[0], self.d_k)
        before = self._len
        self.append(k, v)
        return causal(self.attend_rows, self.keys(), self.values(), q, before)

    def rollback(self, count):
        """Drops the newest steps and gives back the whole steps of storage no longer needed."""
        self._len -= rollback_count(count, self._len)
        reserved = self.reserve_for(self._len)
        self._keys, self._values = self._keys[:reserved].copy(), self._values[:reserved].copy()


class DoublingGrowing(GrowingCache):
    """Seeded bug (docs/mutants.md, growing-doubles): storage doubles when full (or takes just what is
    needed, if more) instead of growing in whole steps."""

    def reserve_for(self, rows):
        return max(rows, 2 * len(self._keys), self.step)
