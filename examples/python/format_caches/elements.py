"""Element codecs as real caches store them: bf16 in uint16 bit patterns, fp8 e4m3 in bytes with a per-tensor scale.

A codec turns rows (n, width) of doubles into its stored parts (a tuple of arrays whose first axis is the row)
and back; `groups(parts)` are the scales and minima a stream exposes (none for element formats).
"""
from fractions import Fraction

import numpy as np


def round_binary(x, precision, emin):
    """x rounded to nearest, ties to even, onto a binary format of `precision` significant bits whose
    normal range starts at 2^emin, as with an unbounded exponent (the caller decides about overflow);
    zeros, infinities and NaN pass through. Division by a power of two and np.rint are exact."""
    a = np.abs(x)
    finite = np.isfinite(a) & (a != 0)
    _, e = np.frexp(np.where(finite, a, 1.0))
    quantum = np.ldexp(1.0, np.maximum(e - 1, emin) - precision + 1)
    return np.where(finite, np.copysign(np.rint(a / quantum) * quantum, x), x)


class Codec:
    """A side's storage: `format` is its declaration in the hello profile (docs/numerics.md §6)."""

    format = "f64"
    residual = 0  # rows gathered in the residual format before they are quantized together (KIVI)

    def __init__(self, width, scale=1.0):
        self.width, self.scale = width, scale

    def row_bytes(self):
        """Bytes one stored row takes (docs/port-protocol.md §7's memory counters)."""
        return self.width * sum(p.itemsize for p in self.encode(np.zeros((1, 1))))

    def encode(self, rows):
        raise NotImplementedError

    def decode(self, parts):
        raise NotImplementedError

    def groups(self, parts):
        """(scales, minima) of the stored rows, None for a side that has none."""
        return None, None


class BF16(Codec):
    """bfloat16: the top half of a float32's bits, rounded to nearest even from the double."""

    format = "bf16"

    def encode(self, rows):
        with np.errstate(over="ignore"):  # beyond bf16's range the rounded value becomes inf in float32
            f = round_binary(rows, 8, -126).astype(np.float32)
        return ((f.view(np.uint32) >> 16).astype(np.uint16),)

    def decode(self, parts):
        return (parts[0].astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class TruncatingBF16(BF16):
    """Seeded bug: bf16 by dropping the low half of the float32 bits (truncation toward zero, no rounding)."""

    def encode(self, rows):
        with np.errstate(over="ignore"):
            return ((rows.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16),)


def _e4m3_table():
    """The 256 byte codes of e4m3 (FN: bias 7, no infinity, 0x7F and 0xFF are NaN) as doubles."""
    code = np.arange(128)
    exp, man = code >> 3, code & 7
    pos = np.where(exp == 0, man * 2.0 ** -9, (1 + man / 8) * np.ldexp(1.0, exp - 7))
    pos[0x7F] = np.nan
    return np.concatenate([pos, np.copysign(pos, -1.0)])


E4M3 = _e4m3_table()
E4M3_MAX = 448.0


def exact_quotient(x, s):
    """x / s in double, nudged one ulp toward the exact quotient where the double lands on an e4m3 midpoint
    although the exact quotient does not (docs/numerics.md §6.1: the exact quotient is rounded once)."""
    if s == 1.0:
        return x.copy()
    with np.errstate(over="ignore"):
        y = x / s
    a = np.abs(y)
    ok = np.isfinite(a) & (a != 0)
    _, e = np.frexp(np.where(ok, a, 1.0))
    quanta = np.ldexp(np.where(ok, a, 0.0), 3 - np.maximum(e - 1, -6))
    for i in zip(*np.nonzero(ok & (quanta - np.floor(quanta) == 0.5))):
        exact = Fraction(float(x[i])) / Fraction(s)
        if exact != Fraction(float(y[i])):
            y[i] = np.nextafter(y[i], np.inf if exact > Fraction(float(y[i])) else -np.inf)
    return y


class E4M3Saturating(Codec):
    """fp8 e4m3 bytes of x / k_scale (or v_scale), saturating beyond ±448 as vLLM's fp8 cache does;
    exposed as the byte's value times the scale."""

    format = "e4m3 saturate scaled"

    def overflow(self, r):
        """What a rounded quotient beyond 448 (or infinite) becomes: ±448."""
        return np.copysign(E4M3_MAX, r)

    def encode(self, rows):
        r = round_binary(exact_quotient(rows, self.scale), 4, -6)
        over = np.abs(r) > E4M3_MAX  # NaN compares false: it stays NaN
        r = np.where(over, self.overflow(r), r)
        magnitude = np.searchsorted(E4M3[:0x7F], np.abs(np.where(np.isnan(r), 0, r)))
        codes = np.where(np.isnan(r), 0x7F, magnitude) | np.where(np.signbit(r), 0x80, 0)
        return (codes.astype(np.uint8),)

    def decode(self, parts):
        return E4M3[parts[0]] * self.scale


class UnsaturatedE4M3(E4M3Saturating):
    """Seeded bug: a plain fp8 conversion without saturation, whose overflow is e4m3's NaN."""

    def overflow(self, r):
        return np.copysign(np.nan, r)
