"""mlx-lm's RotatingKVCache as a kvconform ring: one token written in place over the oldest row after the sinks, a
chunk concatenated after trimming the buffer to max_size - 1 rows (so that each of its queries finds its window),
and a rollback (trim) allowed only while the cache has held fewer than max_size tokens."""
import numpy as np

from kvconform_port import IndexRefusal, RingAdapter

from numpy_caches.common import attend, queries, rollback_count, steps


class MlxRotatingCache(RingAdapter):
    """max_size = W rows, the first `keep` never evicted. The buffer holds the rows in time order: after a chunk of S
    steps, up to max_size - 1 + S of them (the harness sees the sinks and the last W - keep, what the next token
    attends); a single step evicts back to max_size. is_trimmable() is offset < max_size, so once W steps are held
    every rollback is refused: the policy rollback=before_full (mlx-lm's tests pin it). No reserve: mlx keeps none."""

    policies = {"rollback": "before_full"}  # so the harness gives it no reserve: mlx keeps none
    supports_sinks = True

    def __init__(self, config):
        super().__init__(config)
        self.max_size, self.keep, self.d_k, self.d_v = config["capacity"], config["keep"], config["d_k"], config["d_v"]
        self.k, self.v = np.zeros((0, self.d_k)), np.zeros((0, self.d_v))
        self.offset = 0  # tokens seen, as mlx counts them (a trim lowers it)

    def trim_to(self, rows):
        """The buffer cut to `rows`: the sinks kept, the oldest rows after them dropped (mlx's _trim)."""
        drop = self.k.shape[0] - rows
        if drop > 0:
            self.k = np.concatenate([self.k[:self.keep], self.k[self.keep + drop:]])
            self.v = np.concatenate([self.v[:self.keep], self.v[self.keep + drop:]])

    def update(self, k, v):
        """update_and_fetch: in place for one token (_update_in_place), else _update_concat."""
        self.trim_to(self.max_size - 1 if k.shape[0] == 1 or self.offset > 0 else self.k.shape[0])
        self.k, self.v = np.concatenate([self.k, k]), np.concatenate([self.v, v])
        self.offset += k.shape[0]

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        if k.shape[0] > 0:  # mlx's own update of no tokens trims a row (ring-empty-append-evicts): not copied here
            self.update(k, v)

    def prefill(self, k, v, q):
        k, v = steps(k, v, self.d_k, self.d_v)
        m = k.shape[0]
        queries(q, m, self.d_k)
        before_rows, before_pos = self.window_rows(), self.positions()
        if m > 0:
            self.update(k, v)
        positions = np.array(before_pos + list(range(self.offset - m, self.offset)))
        keys = np.concatenate([before_rows[0], k])
        values = np.concatenate([before_rows[1], v])
        out, weights = np.zeros((m, self.d_v)), np.zeros((m, len(positions)))
        for i in range(m):
            step = self.offset - m + i
            seen = (positions <= step) & ((positions < self.keep) | (positions > step - (self.max_size - self.keep)))
            out[i], weights[i, seen] = attend(keys[seen], values[seen], q[i])
        return out, weights

    def rollback(self, count):
        if self.offset >= self.max_size:  # is_trimmable(): offset < max_size
            raise IndexRefusal(f"the cache has held {self.max_size} tokens: not trimmable")
        n = rollback_count(count, self.offset)
        self.offset -= n
        self.k, self.v = self.k[:self.k.shape[0] - n], self.v[:self.v.shape[0] - n]

    def window_rows(self):
        """The rows the next token attends: the sinks and the last W - keep."""
        rest = self.max_size - self.keep
        if self.k.shape[0] <= self.max_size:
            return self.k, self.v
        return (np.concatenate([self.k[:self.keep], self.k[-rest:]]), np.concatenate([self.v[:self.keep], self.v[-rest:]]))

    def positions(self):
        held = self.window_rows()[0].shape[0]
        sinks = min(self.keep, held)
        return list(range(sinks)) + list(range(self.offset - (held - sinks), self.offset))

    def decode(self, q):
        return attend(*self.window_rows(), q)

    def keys(self):
        return self.window_rows()[0]

    def values(self):
        return self.window_rows()[1]

    def size(self):
        return self.window_rows()[0].shape[0]

    def total(self):
        return self.offset
