"""Caches of the flat, growing, ring and paged kinds whose keys and values are stored by codecs, declaring
their storage in the hello profile; `kinds(names, key_codec, value_codec)` makes one of each named kind for a format,
the latent kind's from format_caches/latent.py."""
import numpy as np

from kvconform_port import CapacityRefusal, FlatAdapter, GrowingAdapter, RingAdapter
from numpy_caches.blocks import BlockPool
from numpy_caches.common import attend, steps
from numpy_caches.paged import PagedCache

from .latent import StoredLatent
from .sides import side


class Stored:
    """What every kind here shares: the codecs of its sides and the profile they make."""

    key_codec = value_codec = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.key_codec is not None:
            cls.profile = {"keys": cls.key_codec.format, "values": cls.value_codec.format}


class StoredRows(Stored):
    """A single stream (flat, growing, ring) of rows, its sides stored by the codecs."""

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v = config["d_k"], config["d_v"]
        self.k = side(self.key_codec, self.d_k, config["k_scale"])
        self.v = side(self.value_codec, self.d_v, config["v_scale"])
        self.n = 0

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        self.room(k.shape[0])
        self.k.push(k)
        self.v.push(v)
        self.n += k.shape[0]

    def room(self, n):
        """Refuses an append of n steps that does not fit."""

    def decode(self, q):
        return attend(self.keys(), self.values(), q)

    def keys(self):
        return self.k.rows()

    def values(self):
        return self.v.rows()

    def size(self):
        return self.n

    def key_scales(self):
        return self.k.groups()[0]

    def key_zeros(self):
        return self.k.groups()[1]

    def value_scales(self):
        return self.v.groups()[0]

    def value_zeros(self):
        return self.v.groups()[1]


class FlatStored(StoredRows, FlatAdapter):
    def room(self, n):
        if self.n + n > self.config["capacity"]:
            raise CapacityRefusal(f"{self.n} + {n} steps exceed the capacity {self.config['capacity']}")


class GrowingStored(StoredRows, GrowingAdapter):
    def reserved_rows(self):
        """Storage grows in whole steps and never shrinks: the fewest steps that hold every row."""
        return -(-self.n // self.config["step"]) * self.config["step"]


class RingStored(StoredRows, RingAdapter):
    """A window of `capacity` rows after `keep` sinks; rows stored row by row only (no residual)."""

    supports_sinks = True

    def __init__(self, config):
        super().__init__(config)
        self.total_ = 0

    def append(self, k, v):
        before = self.n
        super().append(k, v)
        self.total_ += self.n - before
        window, keep = self.config["capacity"], self.config["keep"]
        if self.n > window:  # the oldest rows after the sinks go
            for s in (self.k, self.v):
                s.drop(keep, keep + self.n - window)
            self.n = window

    def positions(self):
        sinks = min(self.total_, self.config["keep"])
        return list(range(sinks)) + list(range(self.total_ - (self.n - sinks), self.total_))

    def total(self):
        return self.total_


class StoredPool(BlockPool):
    """Blocks of rows stored as the codecs' parts, each part an array (blocks, block_size, ...)."""

    def __init__(self, num_blocks, block_size, key_codec, value_codec):
        self.block_size, self.codecs = block_size, (key_codec, value_codec)
        self.parts = [tuple(np.zeros((num_blocks, block_size) + p.shape[1:], p.dtype)
                            for p in c.encode(np.zeros((1, c.width)))) for c in self.codecs]
        self.refs = np.zeros(num_blocks, dtype=np.int64)

    def copy(self, source, target):
        for parts in self.parts:
            for p in parts:
                p[target] = p[source]

    def write(self, table, start, k, v):
        blocks, offsets = self._where(table, start, k.shape[0])
        for codec, parts, rows in zip(self.codecs, self.parts, (k, v)):
            for p, stored in zip(parts, codec.encode(rows)):
                p[blocks, offsets] = stored

    def stored(self, table, length, side):
        """The parts of a sequence's rows of one side (0 keys, 1 values)."""
        table = np.asarray(table, dtype=np.int64)
        return tuple(p[table].reshape(-1, *p.shape[2:])[:length] for p in self.parts[side])

    def rows(self, table, length):
        return tuple(c.decode(self.stored(table, length, s)) for s, c in enumerate(self.codecs))


class PagedStored(Stored, PagedCache):
    """The numpy paged cache over a pool of stored blocks; per-row formats only (a block holds final rows)."""

    def make_pool(self, config):
        codecs = (self.key_codec(self.d_k, config["k_scale"]), self.value_codec(self.d_v, config["v_scale"]))
        return StoredPool(config["capacity"], config["block_size"], *codecs)

    def bytes_in_use(self):
        held = len(self.pool.refs) - len(self.free)
        return held * self.pool.block_size * sum(c.row_bytes() for c in self.pool.codecs)

    def side_groups(self, sid, side_index):
        """(scales, minima) of one side (0 keys, 1 values) of a sequence's rows."""
        seq = self.seqs.get(sid)
        return self.pool.codecs[side_index].groups(self.pool.stored(seq.table, seq.length, side_index))

    def key_scales(self, sid):
        return self.side_groups(sid, 0)[0]

    def key_zeros(self, sid):
        return self.side_groups(sid, 0)[1]

    def value_scales(self, sid):
        return self.side_groups(sid, 1)[0]

    def value_zeros(self, sid):
        return self.side_groups(sid, 1)[1]


KINDS = {"flat": FlatStored, "growing": GrowingStored, "ring": RingStored, "paged": PagedStored,
         "latent": StoredLatent}


def stored(base, key_codec, value_codec=None):
    """The adapter class `base` storing keys with key_codec and values with value_codec (default: the same)."""
    attrs = {"key_codec": key_codec, "value_codec": value_codec or key_codec}
    return type(f"{base.__name__}_{key_codec.__name__}", (base,), attrs)


def kinds(names, key_codec, value_codec=None):
    """Adapter classes of the named kinds storing keys with key_codec and values with value_codec (default: the same)."""
    return [stored(KINDS[k], key_codec, value_codec) for k in names]
