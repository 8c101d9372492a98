"""A numpy ring buffer (ring kind) with attention sinks, a reserve, prefill and rollback, and twins: the sinks lost
to a bulk append, and a rollback that leaves decodes on the stale window."""
import numpy as np

from kvconform_port import IndexRefusal, RingAdapter

from .common import attend, queries, rollback_count, steps


class RingCache(RingAdapter):
    """W + R slots (R the reserve): the first `keep` hold the sinks (the first steps ever appended), the other
    W + R - keep are a ring in which step t (t >= keep) lives in slot keep + (t - keep) mod (W + R - keep).
    Decode attends the sinks and the last W - keep steps; a rollback moves the end back while the rows the
    earlier window needs are still held."""

    supports_sinks = True
    dtype = np.float64

    def __init__(self, config):
        super().__init__(config)
        self.window, self.keep, self.d_k, self.d_v = config["capacity"], config["keep"], config["d_k"], config["d_v"]
        self.slots = self.window + config.get("reserve", 0)
        self._keys = np.full((self.slots, self.d_k), np.nan, dtype=self.dtype)
        self._values = np.full((self.slots, self.d_v), np.nan, dtype=self.dtype)
        self._total = self._held = 0

    def _slots(self, first, count):
        """Slots of the non-sink steps first .. first + count - 1."""
        return self.keep + (np.arange(first, first + count) - self.keep) % (self.slots - self.keep)

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        self.write(k, v)

    def write(self, k, v):
        """Stores well-formed steps: sinks first, then of the rest only the last W + R - keep (the ones before
        would be overwritten within this append anyway)."""
        n = k.shape[0]
        sinks = min(n, max(0, self.keep - self._total))
        self._keys[self._total:self._total + sinks] = k[:sinks]
        self._values[self._total:self._total + sinks] = v[:sinks]
        rest = n - sinks
        skip = max(0, rest - (self.slots - self.keep))
        slots = self._slots(self._total + sinks + skip, rest - skip)
        self._keys[slots] = k[sinks + skip:]
        self._values[slots] = v[sinks + skip:]
        self._total += n
        self._held = min(self._held + n, self.slots)

    def positions(self):
        sinks = min(self._held, self.keep)
        return list(range(sinks)) + list(range(self._total - (self._held - sinks), self._total))

    def _order(self):
        """Slots of the held steps, oldest first."""
        positions = np.array(self.positions(), dtype=np.int64)
        ring = self.keep + (positions - self.keep) % (self.slots - self.keep)
        return np.where(positions < self.keep, positions, ring)

    def keys(self):
        return self._keys[self._order()]

    def values(self):
        return self._values[self._order()]

    def size(self):
        return self._held

    def total(self):
        return self._total

    def attend_rows(self, keys, values, q):
        return attend(keys, values, q)

    def _seen(self, at):
        """Which held rows the query of step `at` attends: the sinks and the last W - keep steps up to it."""
        p = np.array(self.positions(), dtype=np.int64)
        return (p <= at) & ((p < self.keep) | (p > at - (self.window - self.keep)))

    def _attend_window(self, q, at):
        """One attention at step `at` over the rows it sees; weights over every held row, 0 on the others."""
        seen = self._seen(at)
        if q.ndim != 1 or q.shape[0] != self.d_k or not seen.any():
            return attend(self.keys()[seen], self.values()[seen], q)  # its refusal: shape or empty
        out, w = self.attend_rows(self.keys()[seen], self.values()[seen], q)
        weights = np.zeros(self._held)
        weights[seen] = w
        return out, weights

    def decode(self, q):
        return self._attend_window(q, self._total - 1)

    def prefill(self, k, v, q):
        k, v = steps(k, v, self.d_k, self.d_v)
        m = k.shape[0]
        q = queries(q, m, self.d_k)
        before, t0 = self._held, self._total
        columns = {p: c for c, p in enumerate(self.positions())}
        columns.update({t0 + i: before + i for i in range(m)})
        out, weights = np.zeros((m, self.d_v)), np.zeros((m, before + m))
        for i in range(m):  # a chunk longer than the window evicts rows its early queries see: one step at a time
            self.append(k[i:i + 1], v[i:i + 1])
            out[i], w = self._attend_window(q[i], t0 + i)
            for p, wp in zip(self.positions(), w):
                weights[i, columns[p]] = wp
        return out, weights

    def rollback(self, count):
        """Refused unless every row the window at the earlier step attends is still held."""
        t = self._total - rollback_count(count, self._total)
        first_needed = max(self.keep, t - self.window + self.keep)
        sinks = min(self._held, self.keep)
        if first_needed < t and first_needed < self._total - (self._held - sinks):
            raise IndexRefusal(f"rolling back {count} steps goes beyond the reserve")
        self._held = min(sinks + (self._held - sinks) - min(self._held - sinks, count), t)
        self._total = t


class RollbackStaleWindowRing(RingCache):
    """Seeded bug (docs/mutants.md, ring-rollback-stale-window): a rollback moves the views back, but decodes
    still attend the window that ends where the rolled-back steps did, read from their slots."""

    ghost = 0

    def rollback(self, count):
        super().rollback(count)
        self.ghost += count

    def decode(self, q):
        if not self.ghost:
            return super().decode(q)
        end = self._total + self.ghost
        p = np.arange(max(self.keep, end - (self.window - self.keep)), end)
        slots = np.concatenate([np.arange(min(self.keep, end)), self._slots(p[0], len(p)) if len(p) else p])
        return self.attend_rows(self._keys[slots], self._values[slots], q)


class BulkEvictsSinksRing(RingCache):
    """Seeded bug (docs/mutants.md, ring-bulk-evicts-sinks): an append of n > W steps keeps only its
    last W before anything else, the shortcut of a ring without sinks, so sinks in it are lost."""

    def write(self, k, v):
        drop = max(0, k.shape[0] - self.window)
        self._total += drop
        super().write(k[drop:], v[drop:])
