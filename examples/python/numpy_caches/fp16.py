"""Flat, ring and growing numpy caches that store fp16 as real caches do (numpy's IEEE conversion: beyond 65504 a
value becomes ±inf) and decode in float32, and two twins that mishandle the infinities (docs/numerics.md §4.5)."""
import numpy as np

from .common import attend
from .flat import FlatCache
from .growing import GrowingCache
from .ring import RingCache


class Fp16Storage:
    """Keys and values stored as float16 by `astype` (round to nearest even, overflow to ±inf), attended in
    float32 by the two-pass softmax of common.attend, whatever the stored rows hold."""

    dtype = np.float16
    profile = {"keys": "fp16", "values": "fp16", "working": "f32"}

    def append(self, k, v):
        with np.errstate(over="ignore"):  # an overflow is the IEEE conversion's ±inf, not a warning
            super().append(k.astype(np.float16), v.astype(np.float16))

    def attend_rows(self, keys, values, q):
        return attend(keys.astype(np.float32), values.astype(np.float32), q)


class Fp16Flat(Fp16Storage, FlatCache):
    """A fixed-capacity fp16 cache."""


class Fp16Ring(Fp16Storage, RingCache):
    """A ring buffer of fp16 rows, with attention sinks."""


class Fp16Growing(Fp16Storage, GrowingCache):
    """An fp16 cache without capacity, storage in whole steps."""


class ZerosForInfinitiesFp16(Fp16Flat):
    """Seeded bug: a decode over stored rows that hold an infinity returns zeros (a guard that hides an
    overflow instead of computing through it)."""

    def decode(self, q):
        out, w = super().decode(q)
        if not np.isfinite(self.keys()).all() or not np.isfinite(self.values()).all():
            return np.zeros_like(out), np.zeros_like(w)
        return out, w


class FiniteForNaNFp16(Fp16Flat):
    """Seeded bug: NaN outputs are replaced by 0 (np.nan_to_num on the result), a finite value where every
    IEEE evaluation gives NaN."""

    def decode(self, q):
        out, w = super().decode(q)
        return np.where(np.isnan(out), 0, out), w
