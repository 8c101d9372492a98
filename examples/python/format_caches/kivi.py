"""KIVI-style storage: int4 keys quantized per channel, int4 values per token, each behind an fp16 residual.

Rows wait in the residual, in fp16, until `residual` of them have gathered; then they are quantized together
(docs/numerics.md §6.2): keys in groups of `group` tokens per channel, each channel of a group with its own
scale and minimum; values per token, in groups along d. Small groups and residual, so that short traces fill
them (the references' flat-kivi uses the same).
"""
import numpy as np

from .elements import Codec
from .groups import TokenGroups, quantize, dequantize


class ChannelKeys(Codec):
    """Chunks of `group` tokens, one scale and minimum per channel; codes of tokens i and i + group/2 share a byte."""

    format = "int4 g4 channel asym scale=fp16 r8 res=fp16"
    bits, group, residual = 4, 4, 8

    def encode(self, rows):
        codes, scale, minimum = quantize(rows.reshape(-1, self.group, self.width), self.bits, False, 1)
        half = self.group // 2
        return codes[:, :half] | (codes[:, half:] << 4), scale[:, 0], minimum[:, 0]

    def decode(self, parts):
        codes = np.concatenate([parts[0] & 0x0F, parts[0] >> 4], axis=1)
        return dequantize(codes, parts[1][:, None], parts[2][:, None]).reshape(-1, self.width)

    def groups(self, parts):
        return parts[1].astype(np.float64).ravel(), parts[2].astype(np.float64).ravel()


class TokenValues(TokenGroups):
    """Values per token in groups of 8 along d, with a minimum, behind the same residual."""

    format = "int4 g8 token asym scale=fp16 r8 res=fp16"
    bits, group, symmetric, residual = 4, 8, False, 8


class NeverFlushedKeys(ChannelKeys):
    """Seeded bug: the residual is never flushed (its length is checked against the wrong count), so keys stay fp16."""

    residual = 1 << 62


class NeverFlushedValues(TokenValues):
    residual = 1 << 62
