"""A pool of fixed-size blocks of rows with reference counts, and the sequences that hold tables of them."""
import numpy as np

from kvconform_port import IndexRefusal

from .common import attend, causal, queries, rollback_count


class BlockPool:
    """num_blocks blocks of block_size rows of keys and values; a block's count is the number of
    tables that hold it. Which blocks are free is the owner's business (paged: a free list; prefix:
    a free list and a cache of evictable ones)."""

    def __init__(self, num_blocks, block_size, d_k, d_v):
        self.block_size = block_size
        self.keys = np.full((num_blocks, block_size, d_k), np.nan)
        self.values = np.full((num_blocks, block_size, d_v), np.nan)
        self.refs = np.zeros(num_blocks, dtype=np.int64)

    def hold(self, block):
        self.refs[block] += 1

    def drop(self, block):
        """One table less holds `block`; True when none does any more."""
        self.refs[block] -= 1
        return self.refs[block] == 0

    def copy(self, source, target):
        self.keys[target], self.values[target] = self.keys[source], self.values[source]

    def _where(self, table, start, count):
        rows = np.arange(start, start + count)
        return np.asarray(table, dtype=np.int64)[rows // self.block_size], rows % self.block_size

    def write(self, table, start, k, v):
        """Rows start .. start + n - 1 of a sequence whose blocks are `table`."""
        blocks, offsets = self._where(table, start, k.shape[0])
        self.keys[blocks, offsets], self.values[blocks, offsets] = k, v

    def rows(self, table, length):
        """The sequence's keys and values, (length, d) each, as copies: its whole blocks, then the filled rows."""
        table = np.asarray(table, dtype=np.int64)
        return (self.keys[table].reshape(-1, self.keys.shape[2])[:length],
                self.values[table].reshape(-1, self.values.shape[2])[:length])

    def ref_counts(self):
        return {int(b): int(self.refs[b]) for b in np.flatnonzero(self.refs)}

    def blocks_needed(self, table, length, n, refs=None):
        """Blocks an append of n rows takes: new ones past the table, plus one to copy a shared,
        partly filled last block before writing into it (copy-on-write); `refs` may be a trial copy."""
        refs = self.refs if refs is None else refs
        shared = length % self.block_size != 0 and refs[table[-1]] > 1
        return -(-(length + n) // self.block_size) - len(table) + (1 if shared else 0)

    def copies_on_write(self, table, length, frozen=()):
        """Whether the next write into a table of `length` rows copies its partly filled last block first: another
        table holds it, or it is `frozen` (a registered prefix block)."""
        return length % self.block_size != 0 and (self.refs[table[-1]] > 1 or table[-1] in frozen)


class Sequence:
    """A block table and the number of rows in it (prefix caches add tokens and block hashes)."""

    def __init__(self, table=(), length=0):
        self.table, self.length = list(table), length


class Sequences:
    """Live sequences by id; ids are issued in creation order and never reused, so a larger id is a newer sequence."""

    def __init__(self):
        self.live, self.next_id = {}, 0

    def add(self, seq):
        self.live[self.next_id] = seq
        self.next_id += 1
        return self.next_id - 1

    def get(self, sid):
        """The live sequence `sid`; IndexRefusal for an unknown or released one (or None)."""
        seq = self.live.get(sid) if isinstance(sid, int) else None
        if seq is None:
            raise IndexRefusal(f"no live sequence {sid!r}")
        return seq


class PoolViews:
    """What a block-pool cache (paged, prefix) shows of itself, read from its `seqs` (Sequences),
    `pool` (BlockPool) and `free` list: decode, rows, block tables, reference counts, free blocks."""

    def decode(self, sid, q):
        seq = self.seqs.get(sid)
        return attend(*self.pool.rows(seq.table, seq.length), q)

    def attend_prefill(self, sid, before, q):
        """The causal attentions of a prefill just appended to `sid` after `before` rows."""
        seq = self.seqs.get(sid)
        return causal(attend, *self.pool.rows(seq.table, seq.length), q, before)

    def checked_prefill(self, sid, k, q):
        """The rows held before a prefill onto `sid`, once its queries are the chunk's (refused otherwise)."""
        before = self.seqs.get(sid).length
        queries(q, k.shape[0] if k.ndim == 2 else 1, self.d_k)
        return before

    def drop_tail(self, sid, count):
        """Rolls `sid` back by count rows; returns the blocks past its new end, last first, which it no longer holds
        and no other table does."""
        seq = self.seqs.get(sid)
        seq.length -= rollback_count(count, seq.length)
        gone = []
        while len(seq.table) * self.pool.block_size >= seq.length + self.pool.block_size:
            block = seq.table.pop()
            if self.pool.drop(block):
                gone.append(block)
        return gone

    def keys(self, sid):
        seq = self.seqs.get(sid)
        return self.pool.rows(seq.table, seq.length)[0]

    def values(self, sid):
        seq = self.seqs.get(sid)
        return self.pool.rows(seq.table, seq.length)[1]

    def block_table(self, sid):
        return list(self.seqs.get(sid).table)

    def ref_counts(self):
        return self.pool.ref_counts()

    def free_blocks(self):
        return len(self.free)
