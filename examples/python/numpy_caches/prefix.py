"""A numpy prefix cache (prefix kind): full blocks found by hash chain, kept after release, evicted LRU, driven as a
create or in a scheduler's phases; and a twin hashing a block without its parent, one ignoring an extra key, and one
writing into a registered block after a rollback."""
import collections
import hashlib

from kvconform_port import CapacityRefusal, IndexRefusal, PrefixAdapter

from .blocks import BlockPool, PoolViews, Sequence, Sequences
from .common import token_steps

ROOT = b""  # the parent hash of a sequence's first block


class PrefixCache(PoolViews, PrefixAdapter):
    """A paged pool (fork shares, copy-on-write) where each full block is registered under the hash
    of its parent block's hash and its own tokens, so it names its whole prefix. A registered block no table holds
    stays cached and evictable; an allocation takes free blocks first, then evicts the least recently released (a
    release adds its blocks from the last to the first). When a block fills under a hash that is registered already,
    the earlier block stays the cache's entry and the new one is never shared. An extra key seeds the chain: equal
    tokens under another key share nothing.

    A sequence waits (a prompt, no block) from its lookup, or a retract, until an admit matches its prompt again,
    holds the registered blocks of its longest registered prefix and takes blocks for its next rows; appends write
    into them and only then register the blocks they fill. A create is a lookup and an admit of no rows. The hooks
    walk and settle do nothing here: the radix cache's tree keeps its runs with them."""

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

    def walk(self, blocks):
        """A match or an insert went through these registered blocks: nothing to note under block eviction."""

    def settle(self):
        """After an op that changed a table: nothing to do under block eviction."""

    def held(self, block):
        return self.pool.refs[block] > 0

    def running(self, sid):
        seq = self.seqs.get(sid)
        if seq.waiting:
            raise IndexRefusal(f"sequence {sid} waits: nothing runs before its admit")
        return seq

    def match(self, tokens, root):
        """The registered blocks of the longest whole-block prefix of tokens under root, and their hashes."""
        blocks, chains, parent, bs = [], [], root, self.block_size
        for start in range(0, len(tokens) - bs + 1, bs):
            parent = self.chain_hash(parent, tokens[start:start + bs])
            if parent not in self.registry:
                break
            blocks.append(self.registry[parent])
            chains.append(parent)
        return blocks, chains

    def rematch(self, seq):
        """The hit an admit holds: its prompt matched now, as other requests' allocations may have evicted blocks."""
        return self.match(seq.prompt, seq.root)

    def lookup(self, tokens, extra_key=0):
        seq = Sequence()
        seq.root = ROOT if extra_key == 0 else f"key {extra_key}".encode()
        seq.tokens, seq.hashes, seq.prompt, seq.waiting = [], [], list(tokens), True
        self.walk(self.match(tokens, seq.root)[0])  # seen, not held: an allocation may still evict them
        return self.seqs.add(seq)

    def admit(self, sid, count):
        seq = self.seqs.get(sid)
        if not seq.waiting or count < 0:
            raise IndexRefusal(f"admit of sequence {sid}: it must wait, and the count {count} be at least 0")
        blocks, chains = self.rematch(seq)
        need = -(-count // self.block_size)
        room = len(self.free) + len(self.evictable) - sum(not self.held(b) for b in blocks)
        if need > room:
            raise CapacityRefusal(f"admit: {need} blocks needed, {room} free or evictable besides the hit")
        self.lock(seq, blocks, chains)  # before the allocation, so that it never evicts the hit
        seq.table += self.allocate(need)
        seq.waiting = False
        self.settle()

    def lock(self, seq, blocks, chains):
        """Waiting seq holds its hit: the blocks' rows are its first rows (held again: no longer evictable)."""
        for b in blocks:
            self.evictable.pop(b, None)
            self.pool.hold(b)
        seq.table, seq.hashes, seq.length = list(blocks), list(chains), len(blocks) * self.block_size
        seq.tokens = seq.prompt[:seq.length]
        self.hits += seq.length
        self.walk(blocks)

    def create(self, tokens, extra_key=0):
        sid = self.lookup(tokens, extra_key)
        self.admit(sid, 0)
        return sid

    def fork(self, sid):
        seq = self.running(sid)
        child = Sequence(seq.table[:-(-seq.length // self.block_size)], seq.length)  # not the blocks for rows to come
        for b in child.table:
            self.pool.hold(b)
        child.tokens, child.hashes, child.root = list(seq.tokens), list(seq.hashes), seq.root
        child.prompt, child.waiting = list(seq.prompt), False
        return self.seqs.add(child)

    def release(self, sid):
        seq = self.seqs.get(sid)
        self.walk(seq.table[:seq.length // self.block_size])  # the insert of a release walks its full blocks
        self.unhold(reversed(seq.table))
        del self.seqs.live[sid]
        self.settle()

    def retract(self, sid):
        seq = self.running(sid)
        seq.prompt = seq.tokens + seq.prompt[len(seq.tokens):]
        self.unhold(reversed(seq.table))  # no insert: registered blocks stay cached, the others go free
        seq.table, seq.length, seq.tokens, seq.hashes, seq.waiting = [], 0, [], [], True
        self.settle()

    def abort(self, sid):
        self.unhold(reversed(self.seqs.get(sid).table))  # as a retract lets go
        del self.seqs.live[sid]
        self.settle()

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

    def decode(self, sid, q):
        self.running(sid)
        return super().decode(sid, q)

    def prefill(self, sid, k, v, tokens, q):
        self.running(sid)
        before = self.checked_prefill(sid, k, q)
        self.append(sid, k, v, tokens)
        return self.attend_prefill(sid, before, q)

    def rollback(self, sid, count):
        seq = self.running(sid)
        gone = self.drop_tail(sid, count)  # blocks no table holds now, last first; an admit's for rows to come too
        self.pool.refs[gone] += 1  # held once more, to be given up as a release does
        self.unhold(gone)
        del seq.tokens[seq.length:], seq.hashes[seq.length // self.block_size:]
        self.settle()

    def replaces(self, seq, j):
        """Whether table entry j is copied before an append writes into it: partly filled, and another table holds it
        or it is frozen."""
        block = seq.table[j]
        return (j + 1) * self.block_size > seq.length and (self.pool.refs[block] > 1 or block in self.frozen())

    def append(self, sid, k, v, tokens):
        k, v = token_steps(k, v, tokens, self.d_k, self.d_v, lambda: self.running(sid))
        seq, n, bs = self.running(sid), k.shape[0], self.block_size
        if n == 0:
            return
        last = (seq.length + n - 1) // bs  # the table may hold blocks past its rows, an admit's
        copies = [j for j in range(seq.length // bs, min(last + 1, len(seq.table))) if self.replaces(seq, j)]
        need = len(copies) + max(0, last + 1 - len(seq.table))
        if need > len(self.free) + len(self.evictable):
            raise CapacityRefusal(f"{need} blocks needed, {len(self.free)} free and {len(self.evictable)} evictable")
        fresh = self.allocate(need)  # every block first: evictions happen before any write
        for j in copies:
            old, seq.table[j] = seq.table[j], fresh.pop(0)
            self.pool.copy(old, seq.table[j])
            self.unhold([old])  # another table holds it, or it stays cached as registered
        seq.table += fresh
        self.pool.write(seq.table, seq.length, k, v)
        seq.length += n
        seq.tokens += tokens
        self.register_full_blocks(seq)
        self.settle()

    def register_full_blocks(self, seq):
        bs = self.block_size
        for i in range(len(seq.hashes), seq.length // bs):
            parent = seq.hashes[-1] if seq.hashes else seq.root
            seq.hashes.append(self.chain_hash(parent, seq.tokens[i * bs:(i + 1) * bs]))
            if seq.hashes[-1] not in self.registry:
                self.registry[seq.hashes[-1]] = seq.table[i]
                self.hash_of[seq.table[i]] = seq.hashes[-1]

    def allocate(self, n):
        """n blocks, held once, taken before any row is written."""
        return [self.take() for _ in range(n)]

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
    """Seeded bug (docs/mutants.md, prefix-ignores-extra-key): a create's (and a lookup's) extra key is left out of the
    chain, so equal tokens under another tenant's key find its blocks."""

    def lookup(self, tokens, extra_key=0):  # a create is a lookup first
        return super().lookup(tokens)


class RollbackWritesRegisteredPrefix(PrefixCache):
    """Seeded bug (docs/mutants.md, prefix-rollback-writes-registered-block): after a rollback leaves a registered
    block partly filled, the next append writes into it in place, changing the rows its hash stands for."""

    def frozen(self):
        return {}
