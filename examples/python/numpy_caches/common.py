"""What the numpy caches share: validating an append's steps and a prefill's queries, and one two-pass softmax
attention."""
import numpy as np

from kvconform_port import EmptyRefusal, IndexRefusal, ShapeRefusal


def steps(k, v, d_k, d_v):
    """An append's k and v as 2-D (n, width) arrays: each may be 1-D (one step) or 2-D (n steps);
    anything else, or k and v with different step counts, is refused."""
    def rows(a, width, name):
        if a.ndim == 1 and a.shape[0] == width:
            return a.reshape(1, width)
        if a.ndim == 2 and a.shape[1] == width:
            return a
        raise ShapeRefusal(f"{name} must be 1-D ({width}) or 2-D (n, {width}), got shape {a.shape}")
    k, v = rows(k, d_k, "k"), rows(v, d_v, "v")
    if k.shape[0] != v.shape[0]:
        raise ShapeRefusal(f"k has {k.shape[0]} steps and v {v.shape[0]}")
    return k, v


def token_steps(k, v, tokens, d_k, d_v, live):
    """A prefix append's k and v as 2-D arrays, one token per step; ShapeRefusal otherwise, once `live()` has refused
    an unknown sequence as such (that refusal comes first)."""
    try:
        k, v = steps(k, v, d_k, d_v)
        if len(tokens) != k.shape[0]:
            raise ShapeRefusal(f"{len(tokens)} tokens for {k.shape[0]} steps")
    except ShapeRefusal:
        live()
        raise
    return k, v


def attend(keys, values, q):
    """s = K q / sqrt(d_k), w = softmax(s) (maximum subtracted), output = w V: two passes, in the
    precision of `keys` (q is rounded to it first, as a cache that stores that format would)."""
    if q.ndim != 1 or q.shape[0] != keys.shape[1]:
        raise ShapeRefusal(f"q must be 1-D of width {keys.shape[1]}, got shape {q.shape}")
    if keys.shape[0] == 0:
        raise EmptyRefusal("decode of an empty cache")
    dtype = keys.dtype
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-domain inputs give inf/nan, not warnings
        s = keys @ q.astype(dtype) / np.sqrt(dtype.type(keys.shape[1]))
        p = np.exp(s - s.max())
        w = p / p.sum()
        return w @ values, w


def queries(q, m, d_k):
    """A prefill's queries: 2-D (m, d_k), one per step appended."""
    if q.ndim != 2 or q.shape != (m, d_k):
        raise ShapeRefusal(f"q must be 2-D ({m}, {d_k}), got shape {q.shape}")
    return q


def rollback_count(count, held):
    """A rollback's count, refused unless 0 <= count <= held."""
    if not 0 <= count <= held:
        raise IndexRefusal(f"cannot roll back {count} of {held} steps")
    return count


def causal(attend_rows, keys, values, q, before):
    """The m causal attentions of a prefill over rows that do not move: query i attends rows 0 .. before + i with
    attend_rows(keys, values, q_i); weights (m, before + m), 0 beyond each query's rows."""
    m = q.shape[0]
    out, weights = np.zeros((m, values.shape[1])), np.zeros((m, before + m))
    for i in range(m):
        out[i], weights[i, :before + i + 1] = attend_rows(keys[:before + i + 1], values[:before + i + 1], q[i])
    return out, weights
