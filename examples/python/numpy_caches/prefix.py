"""A numpy prefix cache (prefix kind): full blocks found by hash chain, kept after release, evicted LRU; and a twin
hashing a block without its parent, one ignoring a create's extra key, and one writing into a registered block after
a rollback."""
import collections
import hashlib

from kvconform_port import CapacityRefusal, PrefixAdapter

from .blocks import BlockPool, PoolViews, Sequence, Sequences
from .common import token_steps

ROOT = b""  # the parent hash of a sequence's first block


class PrefixCache(PoolViews, PrefixAdapter):
    """A paged pool (fork shares, copy-on-write) where each full block is registered under the hash
    of its parent block's hash and its own tokens, so it names its whole prefix. create(tokens) takes
    the registered blocks of the longest registered prefix. A registered block no table holds stays
    cached and evictable; an append takes free blocks first, then evicts the least recently released
    (a release adds its blocks from the last to the first). When a block fills under a hash that is
    registered already, the earlier block stays the cache's entry and the new one is never shared. A create's extra
    key seeds the chain: equal tokens under another key share nothing."""

    supports_extra_keys = True

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v, self.block_size = config["d_k"], config["d_v"], config["block_size"]
        self.pool = BlockPool(config["capacity"], self.block_size, self.d_k, self.d_v)
        self.free = list(range(config["capacity"] - 1, -1, -1))
        self.evictable = collections.OrderedDict()  # block -> None, least recently released first
        self.registry, self.hash_of = {}, {}  # hash -> block and back, for registered blocks
        self.seqs = Sequences()
        self.hits = 0

    def chain_hash(self, parent, tokens):
        """The hash of a block: its parent's hash and its own tokens."""
        return hashlib.blake2b(parent + b"|" + ",".join(map(str, tokens)).encode(), digest_size=16).digest()

    def create(self, tokens, extra_key=0):
        seq, bs = Sequence(), self.block_size
        parent = seq.root = ROOT if extra_key == 0 else f"key {extra_key}".encode()
        seq.tokens, seq.hashes = [], []
        for start in range(0, len(tokens) - bs + 1, bs):
            parent = self.chain_hash(parent, tokens[start:start + bs])
            block = self.registry.get(parent)
            if block is None:
                break
            self.evictable.pop(block, None)  # held again: no longer evictable
            self.pool.hold(block)
            seq.table.append(block)
            seq.hashes.append(parent)
        seq.length = len(seq.table) * bs
        seq.tokens = list(tokens[:seq.length])
        self.hits += seq.length
        return self.seqs.add(seq)

    def fork(self, sid):
        seq = self.seqs.get(sid)
        for b in seq.table:
            self.pool.hold(b)
        child = Sequence(seq.table, seq.length)
        child.tokens, child.hashes, child.root = list(seq.tokens), list(seq.hashes), seq.root
        return self.seqs.add(child)

    def release(self, sid):
        self.unhold(reversed(self.seqs.get(sid).table))
        del self.seqs.live[sid]

    def unhold(self, blocks):
        """One table fewer holds each block, in order: a registered one no table holds becomes evictable."""
        for b in blocks:
            if self.pool.drop(b):
                if b in self.hash_of:
                    self.evictable[b] = None
                else:
                    self.free.append(b)

    def frozen(self):
        """Blocks written only by copying: the registered ones, which stay what their hash says."""
        return self.hash_of

    def prefill(self, sid, k, v, tokens, q):
        before = self.checked_prefill(sid, k, q)
        self.append(sid, k, v, tokens)
        return self.attend_prefill(sid, before, q)

    def rollback(self, sid, count):
        seq = self.seqs.get(sid)
        gone = self.drop_tail(sid, count)  # blocks no table holds now, last first
        self.pool.refs[gone] += 1  # held once more, to be given up as a release does
        self.unhold(gone)
        del seq.tokens[seq.length:], seq.hashes[seq.length // self.block_size:]

    def append(self, sid, k, v, tokens):
        k, v = token_steps(k, v, tokens, self.d_k, self.d_v, lambda: self.seqs.get(sid))
        seq = self.seqs.get(sid)
        if k.shape[0] == 0:
            return
        need = self.pool.blocks_needed(seq.table, seq.length, k.shape[0])
        need += self.pool.copies_on_write(seq.table, seq.length, self.frozen()) and \
            not self.pool.copies_on_write(seq.table, seq.length)
        if need > len(self.free) + len(self.evictable):
            raise CapacityRefusal(f"{need} blocks needed, {len(self.free)} free and {len(self.evictable)} evictable")
        fresh = [self.take() for _ in range(need)]  # every block first: evictions happen before any write
        if self.pool.copies_on_write(seq.table, seq.length, self.frozen()):
            shared = seq.table[-1]
            seq.table[-1] = fresh.pop(0)
            self.pool.copy(shared, seq.table[-1])
            self.unhold([shared])  # another table holds it, or it stays cached as registered
        seq.table += fresh
        self.pool.write(seq.table, seq.length, k, v)
        seq.length += k.shape[0]
        seq.tokens += tokens
        self.register_full_blocks(seq)

    def register_full_blocks(self, seq):
        bs = self.block_size
        for i in range(len(seq.hashes), seq.length // bs):
            parent = seq.hashes[-1] if seq.hashes else seq.root
            seq.hashes.append(self.chain_hash(parent, seq.tokens[i * bs:(i + 1) * bs]))
            if seq.hashes[-1] not in self.registry:
                self.registry[seq.hashes[-1]] = seq.table[i]
                self.hash_of[seq.table[i]] = seq.hashes[-1]

    def take(self):
        """A free block, or else the least recently released evictable one, which leaves the cache."""
        if self.free:
            block = self.free.pop()
        else:
            block, _ = self.evictable.popitem(last=False)
            del self.registry[self.hash_of.pop(block)]
        self.pool.hold(block)
        return block

    def evictable_blocks(self):
        return len(self.evictable)

    def hit_rows(self):
        return self.hits


class HashWithoutParentPrefix(PrefixCache):
    """Seeded bug (docs/mutants.md, prefix-hash-without-parent): a block is hashed by its own tokens
    only, so equal blocks after different prefixes collide and a create finds another prefix's rows."""

    def chain_hash(self, parent, tokens):
        return super().chain_hash(ROOT, tokens)


class IgnoresExtraKeyPrefix(PrefixCache):
    """Seeded bug (docs/mutants.md, prefix-ignores-extra-key): a create's extra key is left out of the chain, so equal
    tokens under another tenant's key find its blocks."""

    def create(self, tokens, extra_key=0):
        return super().create(tokens)


class RollbackWritesRegisteredPrefix(PrefixCache):
    """Seeded bug (docs/mutants.md, prefix-rollback-writes-registered-block): after a rollback leaves a registered
    block partly filled, the next append writes into it in place, changing the rows its hash stands for."""

    def frozen(self):
        return {}
