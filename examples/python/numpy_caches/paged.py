"""A numpy paged cache (paged kind): shared blocks, copy-on-write, optional preemption, prefill and rollback; twins
without copy-on-write and with a rollback that clears a shared block's tail."""
import numpy as np
from kvconform_port import CapacityRefusal, PagedAdapter, ShapeRefusal

from .blocks import BlockPool, PoolViews, Sequence, Sequences
from .common import steps


class PagedCache(PoolViews, PagedAdapter):
    """Sequences hold tables of pool blocks; a fork shares every block (counts rise, nothing is
    allocated); an append into a shared, partly filled last block copies it first. With `preempt`,
    an append that does not fit releases the newest other sequences until it does, or, if even
    all of them would not make room, is refused with nothing released."""

    supports_preempt = True

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v = config["d_k"], config["d_v"]
        self.preempt = config.get("preempt", False)  # a latent config has no such field
        self.pool = self.make_pool(config)
        self.free = list(range(config["capacity"] - 1, -1, -1))  # pop() takes the lowest
        self.seqs = Sequences()

    def make_pool(self, config):
        """The pool of blocks, holding rows as doubles."""
        return BlockPool(config["capacity"], config["block_size"], self.d_k, self.d_v)

    def create(self):
        return self.seqs.add(Sequence())

    def fork(self, sid):
        seq = self.seqs.get(sid)
        for b in seq.table:
            self.pool.hold(b)
        return self.seqs.add(Sequence(seq.table, seq.length))

    def release(self, sid):
        for b in self.seqs.get(sid).table:
            if self.pool.drop(b):
                self.free.append(b)
        del self.seqs.live[sid]

    def checked(self, sid, k, v):
        """The live sequence and 2-D steps of an append; a refusal for whichever is wrong."""
        try:
            k, v = steps(k, v, self.d_k, self.d_v)
        except ShapeRefusal:
            self.seqs.get(sid)  # an unknown sequence is refused as such first
            raise
        return self.seqs.get(sid), k, v

    def append(self, sid, k, v):
        seq, k, v = self.checked(sid, k, v)
        n = k.shape[0]
        if n == 0:
            return []
        victims = []
        if self.pool.blocks_needed(seq.table, seq.length, n) > len(self.free):
            victims = self.victims(sid, n)
            for victim in victims:
                self.release(victim)
        self.write(seq, k, v)
        return victims

    def prefill(self, sid, k, v, q):
        before = self.checked_prefill(sid, k, q)
        preempted = self.append(sid, k, v)
        return (*self.attend_prefill(sid, before, q), preempted)

    def rollback(self, sid, count):
        self.free += self.drop_tail(sid, count)

    def victims(self, sid, n):
        """The newest other sequences whose release makes room for n rows; CapacityRefusal if none would."""
        if self.preempt:
            refs, free, victims = self.pool.refs.copy(), len(self.free), []
            seq = self.seqs.get(sid)
            for other in sorted(self.seqs.live, reverse=True):
                if other == sid:
                    continue
                victims.append(other)
                for b in self.seqs.live[other].table:
                    refs[b] -= 1
                    free += refs[b] == 0
                if self.pool.blocks_needed(seq.table, seq.length, n, refs) <= free:
                    return victims
        raise CapacityRefusal(f"the pool has {len(self.free)} free blocks, too few for {n} more rows")

    def copies_on_write(self, seq):
        return self.pool.copies_on_write(seq.table, seq.length)

    def write(self, seq, k, v):
        if self.copies_on_write(seq):
            shared, own = seq.table[-1], self.take()
            self.pool.copy(shared, own)
            self.pool.drop(shared)  # still held by another table
            seq.table[-1] = own
        while len(seq.table) * self.pool.block_size < seq.length + k.shape[0]:
            seq.table.append(self.take())
        self.pool.write(seq.table, seq.length, k, v)
        seq.length += k.shape[0]

    def take(self):
        block = self.free.pop()
        self.pool.hold(block)
        return block

    def bytes_in_use(self):
        held = len(self.pool.refs) - len(self.free)
        return held * self.pool.block_size * (self.d_k + self.d_v) * 8


class ForkWithoutCowPaged(PagedCache):
    """Seeded bug (docs/mutants.md, paged-fork-without-cow): an append writes into a shared, partly
    filled last block instead of copying it, so the row shows in the other sequence too."""

    def copies_on_write(self, seq):
        return False


class RollbackClearsSharedPaged(PagedCache):
    """Seeded bug (docs/mutants.md, paged-rollback-truncates-shared-block): a rollback clears the rows past the
    sequence's new end in the block it keeps, although a fork still holds that block and reads them."""

    def rollback(self, sid, count):
        super().rollback(sid, count)
        seq = self.seqs.get(sid)
        if seq.length % self.pool.block_size:
            block, kept = seq.table[-1], seq.length % self.pool.block_size
            self.pool.keys[block, kept:], self.pool.values[block, kept:] = np.nan, np.nan
