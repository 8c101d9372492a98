"""One side (keys or values) of a stream of rows, stored by a codec: row by row, or behind an fp16 residual."""
import numpy as np

from .groups import fp16


def concat(parts, more):
    return tuple(np.concatenate([a, b]) for a, b in zip(parts, more))


class RowSide:
    """Rows stored one by one as the codec's parts (whose first axis is the row)."""

    def __init__(self, codec):
        self.codec = codec
        self.parts = codec.encode(np.zeros((0, codec.width)))

    def push(self, rows):
        self.parts = concat(self.parts, self.codec.encode(rows))

    def drop(self, start, stop):
        """Forgets rows [start, stop) (a sliding window's eviction)."""
        self.parts = tuple(np.delete(p, np.s_[start:stop], axis=0) for p in self.parts)

    def rows(self):
        return self.codec.decode(self.parts)

    def groups(self):
        return self.codec.groups(self.parts)


class ResidualSide(RowSide):
    """Rows wait in fp16 until codec.residual of them have gathered, then are quantized together
    from their fp16 values (KIVI); the quantized rows come first, the residual after them."""

    def __init__(self, codec):
        super().__init__(codec)
        self.residual = np.zeros((0, codec.width), dtype=np.float16)

    def push(self, rows):
        for row in rows:  # a 2-D append is its steps one at a time: a chunk closes at its last row
            self.residual = np.concatenate([self.residual, fp16(row[None])])
            if len(self.residual) == self.codec.residual:
                super().push(self.residual.astype(np.float64))
                self.residual = self.residual[:0]

    def drop(self, start, stop):
        raise NotImplementedError("a residual side serves no sliding window")

    def rows(self):
        return np.concatenate([super().rows(), self.residual.astype(np.float64)])


def side(codec_class, width, scale):
    """The side that stores rows of `width` values with codec_class (scale: the per-tensor k_scale or v_scale)."""
    codec = codec_class(width, scale)
    return ResidualSide(codec) if codec.residual else RowSide(codec)
