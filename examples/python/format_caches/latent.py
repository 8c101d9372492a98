"""The numpy latent (MLA) cache with its rows stored by one codec (fp8 e4m3 with the per-tensor k_scale, or integer
groups along each row: values are the rows' own entries, their groups the rows' first ones), declared in the hello
profile; and the twin that averages the stored codes, unscaled."""
import numpy as np

from numpy_caches.blocks import BlockPool
from numpy_caches.latent import LatentCache


class CodedRowPool(BlockPool):
    """Blocks of rows stored as one codec's parts (each an array (blocks, block_size, ...)); a sequence's value rows
    are the first d_c entries of its decoded rows, read from the same parts."""

    def __init__(self, num_blocks, block_size, codec, d_c):
        self.block_size, self.codec, self.d_c = block_size, codec, d_c
        self.parts = tuple(np.zeros((num_blocks, block_size) + p.shape[1:], p.dtype)
                           for p in codec.encode(np.zeros((1, codec.width))))
        self.refs = np.zeros(num_blocks, dtype=np.int64)

    def copy(self, source, target):
        for p in self.parts:
            p[target] = p[source]

    def write(self, table, start, k, v=None):
        blocks, offsets = self._where(table, start, k.shape[0])
        for p, stored in zip(self.parts, self.codec.encode(k)):
            p[blocks, offsets] = stored

    def stored(self, table, length):
        """The parts of a sequence's rows."""
        table = np.asarray(table, dtype=np.int64)
        return tuple(p[table].reshape(-1, *p.shape[2:])[:length] for p in self.parts)

    def rows(self, table, length):
        rows = self.codec.decode(self.stored(table, length))
        return rows, rows[:, :self.d_c]


class StoredLatent(LatentCache):
    """The latent cache over a pool of coded rows; `key_codec` (set by format_caches.caches.stored) stores the whole
    row, so the profile declares it for keys and values alike."""

    key_codec = value_codec = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.key_codec is not None:
            cls.profile = {"keys": cls.key_codec.format, "values": cls.key_codec.format, "latent_path": "absorbed"}

    def make_pool(self, config):
        return CodedRowPool(config["capacity"], config["block_size"], self.key_codec(self.d_k, config["k_scale"]),
                            self.d_v)

    def bytes_in_use(self):
        held = len(self.pool.refs) - len(self.free)
        return held * self.pool.block_size * self.pool.codec.row_bytes()

    def supports(self, config):
        """Integer groups: a value row is its key row's first d_c / G groups, whole (docs/kinds/latent.md, Formats)."""
        group = getattr(self.key_codec, "group", None)
        return super().supports(config) and (group is None or config["d_v"] % group == 0)

    def row_groups(self, sid, value_rows):
        """(scales, minima) of a sequence's rows, or of the first d_c / G groups of each, which its value rows have."""
        seq = self.seqs.get(sid)
        parts = self.pool.stored(seq.table, seq.length)
        if value_rows:
            parts = (parts[0],) + tuple(p[:, :self.d_v // self.key_codec.group] for p in parts[1:])
        return self.pool.codec.groups(parts)

    def key_scales(self, sid):
        return self.row_groups(sid, False)[0]

    def key_zeros(self, sid):
        return self.row_groups(sid, False)[1]

    def value_scales(self, sid):
        return self.row_groups(sid, True)[0]

    def value_zeros(self, sid):
        return self.row_groups(sid, True)[1]


class ValuesUnscaledLatent(StoredLatent):
    """Seeded bug (docs/mutants.md, latent-e4m3-values-unscaled): the scores read the rows times the per-tensor scale,
    but the latent average is taken over the stored codes (the values divided by k_scale), as a kernel that reads
    keys and values through different paths and scales only one."""

    def attended(self, seq):
        rows, _ = super().attended(seq)
        unscaled = type(self.pool.codec)(self.d_k)  # the same codec with scale 1: the codes' own values
        return rows, unscaled.decode(self.pool.stored(seq.table, seq.length))[:, :self.d_v]
