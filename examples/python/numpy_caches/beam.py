"""A numpy beam cache (beam kind): layers x batch rows x kv heads, rollback, reorder, masked GQA decode and causal
prefill; and twins whose reorder aliases repeated rows, or whose prefill aligns its causal mask top-left."""
import numpy as np

from kvconform_port import BeamAdapter, CapacityRefusal, EmptyRefusal, IndexRefusal, ShapeRefusal


class BeamCache(BeamAdapter):
    """Each layer keeps one (H, T, D) array per batch row for keys and one for values, and its own
    length; a reorder gathers rows into fresh copies, so rows repeated by it never share storage."""

    def __init__(self, config):
        super().__init__(config)
        c = config
        self.L, self.B, self.H, self.T, self.D = c["layers"], c["batch"], c["heads"], c["capacity"], c["d_k"]
        self._keys = [[np.full((self.H, self.T, self.D), np.nan) for _ in range(self.B)] for _ in range(self.L)]
        self._values = [[np.full((self.H, self.T, self.D), np.nan) for _ in range(self.B)] for _ in range(self.L)]
        self._length = [0] * self.L

    def _layer(self, layer):
        if not 0 <= layer < self.L:
            raise IndexRefusal(f"layer {layer} is not in [0, {self.L})")
        return layer

    def update(self, layer, start, k, v):
        layer = self._layer(layer)
        block = (self.B, self.H, self.D)
        if k.ndim != 4 or v.ndim != 4 or (k.shape[0], k.shape[1], k.shape[3]) != block or v.shape != k.shape:
            raise ShapeRefusal(f"k and v must both be (B, H, n, D) with (B, H, D) = {block}, got {k.shape}, {v.shape}")
        if not 0 <= start <= self._length[layer]:
            raise IndexRefusal(f"start {start} is not in [0, {self._length[layer]}]")
        n = k.shape[2]
        if start + n > self.T:
            raise CapacityRefusal(f"positions up to {start + n} exceed max_len {self.T}")
        for b in range(self.B):
            self._keys[layer][b][:, start:start + n] = k[b]
            self._values[layer][b][:, start:start + n] = v[b]
        self._length[layer] = start + n  # a start below the length truncated the rest

    def gather(self, rows, index):
        return [rows[i].copy() for i in index]

    def reorder(self, index):
        if len(index) != self.B:
            raise ShapeRefusal(f"{len(index)} indices for {self.B} rows")
        if any(not 0 <= i < self.B for i in index):
            raise IndexRefusal(f"reorder indices {index} are not all in [0, {self.B})")
        for layer in range(self.L):
            self._keys[layer] = self.gather(self._keys[layer], index)
            self._values[layer] = self.gather(self._values[layer], index)

    def keys(self, layer):
        return np.stack([rows[:, :self._length[layer]] for rows in self._keys[layer]])

    def values(self, layer):
        return np.stack([rows[:, :self._length[layer]] for rows in self._values[layer]])

    def length(self, layer):
        return self._length[layer]

    def decode(self, layer, q, mask):
        layer = self._layer(layer)
        n = self._length[layer]
        if q.ndim != 3 or q.shape[0] != self.B or q.shape[1] == 0 or q.shape[1] % self.H or q.shape[2] != self.D:
            raise ShapeRefusal(f"q must be (B, Hq, D) with Hq a multiple of {self.H}, got {q.shape}")
        if mask is not None and mask.shape != (self.B, n):
            raise ShapeRefusal(f"mask must be (B, len) = {(self.B, n)}, got {mask.shape}")
        if n == 0:
            raise EmptyRefusal(f"layer {layer} is empty")
        group = q.shape[1] // self.H  # query heads per kv head
        keys = np.repeat(self.keys(layer), group, axis=1)  # (B, Hq, n, D)
        values = np.repeat(self.values(layer), group, axis=1)
        live = np.ones((self.B, n), dtype=bool) if mask is None else mask != 0
        return masked_attention(q, keys, values, np.broadcast_to(live[:, None, :], keys.shape[:3]))

    def prefill(self, layer, k, v, q, mask):
        layer = self._layer(layer)
        n, m = self._length[layer], k.shape[2] if k.ndim == 4 else 0
        if q.ndim != 4 or q.shape[0] != self.B or q.shape[1] == 0 or q.shape[1] % self.H or q.shape[2:] != (m, self.D):
            raise ShapeRefusal(f"q must be (B, Hq, m, D) with Hq a multiple of {self.H} and m = {m}, got {q.shape}")
        if mask is not None and mask.shape != (self.B, n + m):
            raise ShapeRefusal(f"mask must be (B, len + m) = {(self.B, n + m)}, got {mask.shape}")
        self.update(layer, n, k, v)  # refused as the update at the length is, before anything changes
        group = q.shape[1] // self.H
        keys = np.repeat(self.keys(layer), group, axis=1)  # (B, Hq, n + m, D)
        values = np.repeat(self.values(layer), group, axis=1)
        live = np.ones((self.B, n + m), dtype=bool) if mask is None else mask != 0
        causal = self.causal(n, m)
        if m == 0:
            return np.zeros((self.B, q.shape[1], 0, self.D)), np.zeros((self.B, q.shape[1], 0, n))
        out, weights = zip(*(masked_attention(q[:, :, i], keys, values,
                                              np.broadcast_to((live & causal[i])[:, None, :], keys.shape[:3]))
                             for i in range(m)))
        return np.stack(out, axis=2), np.stack(weights, axis=2)

    def causal(self, n, m):
        """(m, n + m): whether query i of a prefill onto n positions sees position j (up to its own, n + i)."""
        return np.arange(n + m)[None, :] <= n + np.arange(m)[:, None]

    def bytes(self):
        return 2 * self.L * self.B * self.H * self.T * self.D * 8

    def bytes_per_token(self):
        return 2 * self.L * self.H * self.D * 8

    def max_batch_tokens(self, budget):
        return budget // self.bytes_per_token()


def masked_attention(q, keys, values, live):
    """One two-pass softmax per (row, query head) over its live keys: q (B, Hq, D), keys and values
    (B, Hq, n, D), live (B, Hq, n). Dead keys take exactly zero weight; a row with none live gives zeros."""
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-domain inputs give inf/nan, not warnings
        s = np.einsum("bhd,bhnd->bhn", q, keys) / np.sqrt(q.shape[2])
        any_live = live.any(axis=2, keepdims=True)
        m = np.where(any_live, np.where(live, s, -np.inf).max(axis=2, keepdims=True), 0.0)
        p = np.where(live, np.exp(np.where(live, s - m, 0.0)), 0.0)
        w = np.where(any_live, p / np.where(any_live, p.sum(axis=2, keepdims=True), 1.0), 0.0)
        return np.einsum("bhn,bhnd->bhd", w, values), w


class ReorderAliasesBeam(BeamCache):
    """Seeded bug (docs/mutants.md, beam-reorder-aliases): reorder gathers row references, so rows
    it repeats share storage and a later update of one also writes its twin."""

    def gather(self, rows, index):
        return [rows[i] for i in index]


class PrefillTopLeftBeam(BeamCache):
    """Seeded bug (docs/mutants.md, beam-prefill-top-left): a prefill's causal mask is aligned to the top-left corner
    of its (m, len + m) scores, so that query i sees positions 0 .. i instead of 0 .. len + i."""

    def causal(self, n, m):
        return np.arange(n + m)[None, :] <= np.arange(m)[:, None]
