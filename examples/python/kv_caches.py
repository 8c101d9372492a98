"""Numpy KV caches for the kvconform port example: a fixed-capacity cache and a ring with optional sinks."""
import numpy as np


class CacheFull(Exception):
    """len + n > max_len: the append is refused and nothing changes."""


class ShapeError(Exception):
    """Wrong rank or width, or k and v that differ in steps."""


class EmptyCache(Exception):
    """decode_step over an empty cache (0/0 is undefined)."""


def _steps(k, v, d_k, d_v):
    """Validates a 1-D (one step) or 2-D (n steps) append and returns both as 2-D arrays."""
    k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if k.ndim not in (1, 2) or v.ndim not in (1, 2):
        raise ShapeError("k and v must be 1-D or 2-D")
    k, v = np.atleast_2d(k), np.atleast_2d(v)
    if k.shape[1] != d_k or v.shape[1] != d_v:
        raise ShapeError("wrong width")
    if k.shape[0] != v.shape[0]:
        raise ShapeError("k and v differ in steps")
    return k, v


def attend(keys, values, q):
    """One decode step: s = K q / sqrt(d_k), w = softmax(s) with the max subtracted, output = w V."""
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 1 or q.shape[0] != keys.shape[1]:
        raise ShapeError("q must be 1-D of width d_k")
    if keys.shape[0] == 0:
        raise EmptyCache("empty cache")
    s = keys @ q / np.sqrt(keys.shape[1])
    p = np.exp(s - s.max())
    w = p / p.sum()
    return w @ values, w


class FlatKVCache:
    """Up to max_len steps of keys and values, stored as copies in append order."""

    def __init__(self, max_len, d_k, d_v, strict_capacity_bug=False):
        self.k = np.full((max_len, d_k), np.nan)  # NaN: a read of an unfilled row shows
        self.v = np.full((max_len, d_v), np.nan)
        self.len = 0
        self.strict = strict_capacity_bug  # the seed's `>=` bug, kept to show the harness catches it

    def append(self, k, v):
        k, v = _steps(k, v, self.k.shape[1], self.v.shape[1])
        n = k.shape[0]
        full = self.len + n >= self.k.shape[0] if self.strict else self.len + n > self.k.shape[0]
        if full:
            raise CacheFull("cache full")
        self.k[self.len:self.len + n] = k
        self.v[self.len:self.len + n] = v
        self.len += n

    def keys(self):
        return self.k[:self.len]

    def values(self):
        return self.v[:self.len]

    def decode_step(self, q):
        return attend(self.keys(), self.values(), q)


class RingKVCache:
    """The first `keep` steps ever appended (attention sinks) and the last W - keep of the rest, oldest
    first, in a buffer of W rows: sinks in rows 0 .. keep - 1, the rest used as a ring."""

    def __init__(self, window, d_k, d_v, keep=0):
        self.k = np.full((window, d_k), np.nan)
        self.v = np.full((window, d_v), np.nan)
        self.total = 0
        self.keep = keep

    def _slot(self, step):
        part = self.k.shape[0] - self.keep
        return step if step < self.keep else self.keep + (step - self.keep) % part

    def append(self, k, v):
        k, v = _steps(k, v, self.k.shape[1], self.v.shape[1])
        for i in range(k.shape[0]):  # in order: a later row in the same slot overwrites an earlier one
            slot = self._slot(self.total + i)
            self.k[slot], self.v[slot] = k[i], v[i]
        self.total += k.shape[0]

    def size(self):
        return min(self.total, self.k.shape[0])

    def positions(self):
        n = self.size()
        recent = list(range(self.total - (n - min(self.keep, n)), self.total))
        return (list(range(min(self.keep, n))) + recent) if self.total > n else list(range(n))

    def _order(self):
        return [self._slot(p) for p in self.positions()]

    def keys(self):
        return self.k[self._order()].reshape(self.size(), self.k.shape[1])

    def values(self):
        return self.v[self._order()].reshape(self.size(), self.v.shape[1])

    def decode_step(self, q):
        return attend(self.keys(), self.values(), q)
