"""The stream digest of docs/port-protocol.md §8, vectorised with numpy's wrapping uint64 arithmetic."""
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix(z):
    """SplitMix64's finaliser over an array of uint64 words (products and sums wrap modulo 2^64)."""
    z = z ^ (z >> _S30)
    z = z * _M1
    z = z ^ (z >> _S27)
    z = z * _M2
    return z ^ (z >> _S31)


def digest_words(words):
    """The sum over i of mix(w[i] + (i + 1) * G), modulo 2^64, as a Python int; for a 2-D array, one
    such digest per row, as a list. (Array arithmetic on uint64 wraps silently; numpy scalars would warn.)"""
    w = np.asarray(words, dtype=np.uint64)
    sums = mix(w + np.arange(1, w.shape[-1] + 1, dtype=np.uint64) * GOLDEN).sum(axis=-1, dtype=np.uint64)
    return sums.tolist() if w.ndim == 2 else int(sums)


def stream_words(keys, values, positions=()):
    """[rows, d_k, d_v, P] ++ bits(keys) ++ bits(values) ++ positions, as uint64. keys (rows, d_k) and
    values (rows, d_v) are 2-D; their doubles enter as IEEE-754 bit patterns, positions as int64."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.int64)
    w = np.empty(4 + keys.size + values.size + positions.size, dtype=np.uint64)
    w[:4] = (keys.shape[0], keys.shape[1], values.shape[1], positions.size)
    end = 4 + keys.size
    w[4:end] = keys.view(np.uint64).ravel()
    w[end:end + values.size] = values.view(np.uint64).ravel()
    w[end + values.size:] = positions.view(np.uint64).ravel()
    return w


def stream_digest(keys, values, positions=()):
    """The digest of one stream as 16 lowercase hexadecimal digits."""
    return f"{digest_words(stream_words(keys, values, positions)):016x}"


def stream_digests(keys, values):
    """The digests of S streams of equal shape without positions, in one pass: keys (S, rows, d_k),
    values (S, rows, d_v) (a beam layer's streams)."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    count, rows = keys.shape[0], keys.shape[1]
    head = np.tile(np.array([rows, keys.shape[2], values.shape[2], 0], dtype=np.uint64), (count, 1))
    words = np.concatenate([head, keys.view(np.uint64).reshape(count, -1), values.view(np.uint64).reshape(count, -1)],
                           axis=1)
    return [f"{d:016x}" for d in digest_words(words)]
