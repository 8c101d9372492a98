"""A numpy latent (MLA) cache: the paged pool over rows [c ; k_r] whose value rows are views of their first d_c
entries, decoded in the absorbed order; and a twin reading its value rows past the rotary part."""
import numpy as np
from kvconform_port import EmptyRefusal, LatentAdapter, ShapeRefusal

from .blocks import BlockPool
from .paged import PagedCache


class LatentPool(BlockPool):
    """Blocks of rows of width d_k; `values` is a view of columns offset .. offset + d_c of the same array, so a value
    row cannot drift from its key row (docs/kinds/latent.md, Storage)."""

    def __init__(self, num_blocks, block_size, d_k, d_c, offset=0):
        super().__init__(num_blocks, block_size, d_k, 0)
        self.values = self.keys[:, :, offset:offset + d_c]

    def copy(self, source, target):
        self.keys[target] = self.keys[source]

    def write(self, table, start, k, v=None):
        blocks, offsets = self._where(table, start, k.shape[0])
        self.keys[blocks, offsets] = k


def rows_of(k, d_k):
    """An append's k as 2-D rows of width d_k (the kind's appends carry no v: the values are the rows' own)."""
    if k.ndim == 1 and k.shape[0] == d_k:
        return k.reshape(1, d_k)
    if k.ndim == 2 and k.shape[1] == d_k:
        return k
    raise ShapeRefusal(f"k must be 1-D ({d_k}) or 2-D (n, {d_k}), got shape {k.shape}")


def head_shape(q, w_uk, w_uv, d_c, d_r):
    """(Hq, d_nope) of a decode whose q, w_uk and w_uv agree with each other and with d_c and d_r; else ShapeRefusal."""
    if (q.ndim != 2 or q.shape[0] == 0 or q.shape[1] <= d_r or w_uk.shape != (q.shape[0], q.shape[1] - d_r, d_c)
            or w_uv.ndim != 3 or w_uv.shape[0] != q.shape[0] or w_uv.shape[1] == 0 or w_uv.shape[2] != d_c):
        raise ShapeRefusal(f"expected q (Hq, d_nope + {d_r}), w_uk (Hq, d_nope, {d_c}), w_uv (Hq, d_vh, {d_c}); got "
                           f"{q.shape}, {w_uk.shape}, {w_uv.shape}")
    return q.shape[0], q.shape[1] - d_r


def absorbed(rows, values, q, w_uk, w_uv, d_c):
    """FlashMLA's order per head: q~ = W_uk^T q_nope, scores [q~ ; q_r] . row with the full head's scale
    1/sqrt(d_nope + d_r), a two-pass softmax, the latent average sum_i w_i c_i, then W_uv times it."""
    heads, d_nope = head_shape(q, w_uk, w_uv, d_c, rows.shape[1] - d_c)
    if rows.shape[0] == 0:
        raise EmptyRefusal("decode of a sequence without rows")
    output, weights = np.zeros((heads, w_uv.shape[1])), np.zeros((heads, rows.shape[0]))
    scale = 1 / np.sqrt(float(q.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-domain inputs give inf/nan, not warnings
        for h in range(heads):
            s = rows @ np.concatenate([w_uk[h].T @ q[h, :d_nope], q[h, d_nope:]]) * scale
            p = np.exp(s - s.max())
            weights[h] = p / p.sum()
            output[h] = w_uv[h] @ (weights[h] @ values)
    return output, weights


class LatentCache(PagedCache, LatentAdapter):
    """The paged cache's pool, tables, copy-on-write and rollback over latent rows (no preemption); its prefill's
    steps carry each query head's parts."""

    supports_preempt = False
    profile = {"latent_path": "absorbed"}

    def make_pool(self, config):
        return LatentPool(config["capacity"], config["block_size"], self.d_k, self.d_v, self.value_offset())

    def value_offset(self):
        """Where a row's value entries start: at its latent part, the row's first entry."""
        return 0

    def checked(self, sid, k, v):
        try:
            k = rows_of(k, self.d_k)
        except ShapeRefusal:
            self.seqs.get(sid)  # an unknown sequence is refused as such first
            raise
        return self.seqs.get(sid), k, None

    def append(self, sid, k):
        return super().append(sid, k, None)

    def attended(self, seq):
        """The rows a decode of `seq` attends and the value rows it averages."""
        return self.pool.rows(seq.table, seq.length)

    def decode(self, sid, q, w_uk, w_uv):
        return absorbed(*self.attended(self.seqs.get(sid)), q, w_uk, w_uv, self.d_v)

    def prefill(self, sid, k, q, w_uk, w_uv):
        """The append of k, then step i's heads q[i] attend as a decode's over the rows up to its own."""
        seq = self.seqs.get(sid)
        k = rows_of(k, self.d_k)
        if q.ndim != 3 or q.shape[0] != k.shape[0]:
            raise ShapeRefusal(f"q must be (m, Hq, d_nope + d_r) for the {k.shape[0]} steps of k, got {q.shape}")
        head_shape(np.empty(q.shape[1:]), w_uk, w_uv, self.d_v, self.d_k - self.d_v)  # each step's heads alike
        before = seq.length
        self.append(sid, k)
        rows, values = self.attended(seq)
        m, heads, n = k.shape[0], q.shape[1], before + k.shape[0]
        output, weights = np.zeros((m, heads, w_uv.shape[1])), np.zeros((m, heads, n))
        for i in range(m):
            seen = before + i + 1
            output[i], weights[i, :, :seen] = absorbed(rows[:seen], values[:seen], q[i], w_uk, w_uv, self.d_v)
        return output, weights

    def bytes_in_use(self):
        held = len(self.pool.refs) - len(self.free)
        return held * self.pool.block_size * self.d_k * 8


class ValuesPastRotaryLatent(LatentCache):
    """Seeded bug (docs/mutants.md, latent-values-past-rotary): the value rows are read from columns d_r .. d_r + d_c,
    as a kernel that lays the rotary part first, so they take in the rotary part."""

    def value_offset(self):
        return self.d_k - self.d_v
