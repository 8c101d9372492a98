"""A numpy ring buffer (ring kind) with attention sinks, and the sinks lost to a bulk append as a twin."""
import numpy as np

from kvconform_port import RingAdapter

from .common import attend, steps


class RingCache(RingAdapter):
    """W slots: the first `keep` hold the sinks (the first steps ever appended), the other W - keep
    are a ring in which step t (t >= keep) lives in slot keep + (t - keep) mod (W - keep)."""

    supports_sinks = True
    dtype = np.float64

    def __init__(self, config):
        super().__init__(config)
        self.window, self.keep, self.d_k, self.d_v = config["capacity"], config["keep"], config["d_k"], config["d_v"]
        self._keys = np.full((self.window, self.d_k), np.nan, dtype=self.dtype)
        self._values = np.full((self.window, self.d_v), np.nan, dtype=self.dtype)
        self._total = 0

    def _slots(self, first, count):
        """Slots of the non-sink steps first .. first + count - 1."""
        return self.keep + (np.arange(first, first + count) - self.keep) % (self.window - self.keep)

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        self.write(k, v)

    def write(self, k, v):
        """Stores well-formed steps: sinks first, then of the rest only the last W - keep (the ones before
        would be overwritten within this append anyway)."""
        n = k.shape[0]
        sinks = min(n, max(0, self.keep - self._total))
        self._keys[self._total:self._total + sinks] = k[:sinks]
        self._values[self._total:self._total + sinks] = v[:sinks]
        rest = n - sinks
        skip = max(0, rest - (self.window - self.keep))
        slots = self._slots(self._total + sinks + skip, rest - skip)
        self._keys[slots] = k[sinks + skip:]
        self._values[slots] = v[sinks + skip:]
        self._total += n

    def positions(self):
        sinks = min(self._total, self.keep)
        recent = min(self._total - sinks, self.window - self.keep)
        return list(range(sinks)) + list(range(self._total - recent, self._total))

    def _order(self):
        """Slots of the held steps, oldest first."""
        positions = np.array(self.positions(), dtype=np.int64)
        ring = self.keep + (positions - self.keep) % (self.window - self.keep)
        return np.where(positions < self.keep, positions, ring)

    def keys(self):
        return self._keys[self._order()]

    def values(self):
        return self._values[self._order()]

    def size(self):
        return len(self.positions())

    def total(self):
        return self._total

    def decode(self, q):
        return attend(self.keys(), self.values(), q)


class BulkEvictsSinksRing(RingCache):
    """Seeded bug (docs/mutants.md, ring-bulk-evicts-sinks): an append of n > W steps keeps only its
    last W before anything else, the shortcut of a ring without sinks, so sinks in it are lost."""

    def write(self, k, v):
        drop = max(0, k.shape[0] - self.window)
        self._total += drop
        super().write(k[drop:], v[drop:])
