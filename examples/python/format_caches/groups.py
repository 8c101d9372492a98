"""Integer group codecs as llama.cpp stores them (q8_0, q4_1) and KIVI's per-channel keys, in numpy.

Groups and their rules are docs/numerics.md §6.2: a symmetric group stores scale = max|x| / qmax and codes
in [-qmax, qmax]; an asymmetric one scale = (max - min) / qmax, its minimum, and codes in [0, qmax]; scales
and minima in fp16, codes rounded to nearest even and clamped. Both are formed in double, then stored.
"""
import numpy as np

from .elements import Codec


def fp16(x):
    """x stored in fp16, rounded to nearest even from the double (IEEE: beyond 65504 is inf)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float16)


def quantize(x, bits, symmetric, axis, divisor=None):
    """Codes, fp16 scales and fp16 minima (None when symmetric) of the groups along `axis` of x; a
    symmetric scale is max|x| / divisor, qmax unless said otherwise."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lo, hi = x.min(axis=axis, keepdims=True), x.max(axis=axis, keepdims=True)
        if symmetric:
            qmax = 2 ** (bits - 1) - 1
            scale, minimum = fp16(np.maximum(np.abs(lo), np.abs(hi)) / (divisor or qmax)), None
            zero, low = 0.0, -qmax
        else:
            qmax = 2 ** bits - 1
            scale, minimum = fp16((hi - lo) / qmax), fp16(lo)
            zero, low = minimum.astype(np.float64), 0
        d = scale.astype(np.float64)
        usable = np.isfinite(d) & (d != 0)  # a zero or overflowed scale codes every value as 0
        codes = np.where(usable, np.clip(np.rint((x - zero) / np.where(usable, d, 1.0)), low, qmax), 0)
    return codes.astype(np.int8 if symmetric else np.uint8), scale, minimum


def dequantize(codes, scale, minimum):
    """code * scale + minimum, in double."""
    with np.errstate(invalid="ignore"):
        value = codes.astype(np.float64) * scale.astype(np.float64)
        return value if minimum is None else value + minimum.astype(np.float64)


class TokenGroups(Codec):
    """Each row in groups of `group` consecutive values along d (the last group may be short), as
    llama.cpp's blocks: q8_0 is 8 bits symmetric, q4_1 4 bits with a minimum. 4-bit codes are packed two
    to a byte as llama.cpp packs a block: byte i holds value i in its low nibble and value i + group/2 in
    its high one. A short group is padded with its last value, which changes neither its range nor its codes."""

    bits, group, symmetric = 8, 32, True
    divisor = None  # of a symmetric scale: qmax

    def __init__(self, width, scale=1.0):
        super().__init__(width, scale)
        self.count = -(-width // self.group)

    def row_bytes(self):
        """The packed codes and each group's fp16 scale (and minimum)."""
        return -(-self.width * self.bits // 8) + self.count * 2 * (1 if self.symmetric else 2)

    def encode(self, rows):
        padded = np.pad(rows, ((0, 0), (0, self.count * self.group - self.width)), mode="edge")
        codes, scale, minimum = quantize(padded.reshape(-1, self.count, self.group), self.bits, self.symmetric, 2,
                                         self.divisor)
        scale, minimum = scale[..., 0], None if minimum is None else minimum[..., 0]
        if self.bits == 4:
            codes = self.pack(codes)
        return (codes, scale) if minimum is None else (codes, scale, minimum)

    def pack(self, codes):
        half = self.group // 2
        return codes[..., :half] | (codes[..., half:] << 4)

    def unpack(self, packed):
        return np.concatenate([packed & 0x0F, packed >> 4], axis=-1)

    def decode(self, parts):
        codes = self.unpack(parts[0]) if self.bits == 4 else parts[0]
        minimum = parts[2][..., None] if len(parts) > 2 else None
        values = dequantize(codes, parts[1][..., None], minimum)
        return values.reshape(-1, self.count * self.group)[:, :self.width]

    def groups(self, parts):
        return parts[1].astype(np.float64).ravel(), parts[2].astype(np.float64).ravel() if len(parts) > 2 else None


class Q8_0(TokenGroups):
    """llama.cpp's q8_0: groups of 32, int8, symmetric, fp16 scale = amax / 127."""

    format = "int8 g32 token sym scale=fp16"


class AmaxOver128Q8_0(Q8_0):
    """Seeded bug: the scale amax / 128 (the int8 range taken as 128 steps), 127/128 of what q8_0 stores."""

    divisor = 128


class Q4_1(TokenGroups):
    """llama.cpp's q4_1: groups of 32, 4-bit codes with an fp16 scale and an fp16 minimum."""

    format = "int4 g32 token asym scale=fp16"
    bits, symmetric = 4, False


class PairedNibblesQ4_1(Q4_1):
    """Seeded bug: packs llama.cpp's way (value i with value i + 16) but unpacks values 2i and 2i + 1 from
    byte i, the layout of another codebase."""

    def unpack(self, packed):
        return np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(*packed.shape[:-1], 2 * packed.shape[-1])
