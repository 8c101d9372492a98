"""A numpy tiered cache (tiered kind): the prefix cache's pool with a host tier and an optional disk tier, and
numbered transfers between them that complete or fail in any order; and twins breaking one rule each, after the
engine reports docs/kinds/tiered.md names."""
import itertools

import numpy as np
from kvconform_port import CapacityRefusal, EmptyRefusal, IndexRefusal, PendingRefusal, ShapeRefusal, TieredAdapter

from .common import steps
from .prefix import PrefixCache
from .tier_store import TierStore


class Transfer:
    """A pending copy and what it holds until it ends: a host store its source device blocks, a disk store its host
    source entry (pinned), a load the entries it reads (pinned) and, from host, its destination device blocks."""

    def __init__(self, store, tier, sid, chains, blocks=(), start=0):
        self.store, self.tier, self.sid, self.chains = store, tier, sid, chains
        self.blocks = list(blocks)  # a host store's sources, a host load's destinations
        self.start = start  # a load: the sequence's rows when it began
        self.sources = []  # the entries it reads: a disk store's host entry, a load's entries
        self.dest = None  # a store's new entry


class TieredCache(PrefixCache, TieredAdapter):
    """PrefixCache's device pool (no extra keys), whose sequences remember their prompt, and tiers of tier blocks
    (host_factor device blocks, F rows): tier 1 the host, tier 2 the disk when disk_blocks > 0. A store copies a
    written tier block to the host (holding its device blocks as a table does) or a host entry to the disk (pinning
    it); a load copies the tier blocks that continue a sequence's prompt from the host into device blocks past its
    rows, taken at once, or from the disk into pending host entries, pinning what it reads. Copies happen when the
    transfer completes; a failed one drops its destination and lets its sources go, and a failed load leaves its
    sequence as it was (load_failure=recompute). A sequence whose load is pending refuses every op."""

    def __init__(self, config):
        super().__init__(config)
        self.factor = config["host_factor"]
        self.F = self.factor * self.block_size
        self.tiers = {1: TierStore(config["host_blocks"], self.F, self.d_k, self.d_v, self.may_evict)}
        if config["disk_blocks"] > 0:
            self.tiers[2] = TierStore(config["disk_blocks"], self.F, self.d_k, self.d_v, self.may_evict)
        self.transfers = {}  # id -> Transfer, pending
        self.loading = {}  # sequence id -> its pending load's id
        self.ids = itertools.count(100)  # the cache's own transfer ids, which the library maps numbers to

    # The prefix ops, refused on a sequence whose load is pending.

    def ready(self, sid):
        if sid in self.loading:
            raise PendingRefusal(f"sequence {sid}'s load is pending")

    def create(self, tokens):
        sid = super().create(tokens)
        self.seqs.live[sid].prompt = list(tokens)
        return sid

    def fork(self, sid):
        self.ready(sid)
        child = super().fork(sid)
        self.seqs.live[child].prompt = list(self.seqs.get(sid).prompt)
        return child

    def release(self, sid):
        self.ready(sid)
        super().release(sid)

    def append(self, sid, k, v, tokens):
        self.ready(sid)
        super().append(sid, k, v, tokens)

    def decode(self, sid, q):
        self.ready(sid)
        return super().decode(sid, q)

    def prefill(self, sid, k, v, tokens, q):
        self.ready(sid)
        return super().prefill(sid, k, v, tokens, q)

    def rollback(self, sid, count):
        self.ready(sid)
        super().rollback(sid, count)

    # Transfers.

    def tier(self, tier):
        if tier not in self.tiers:
            raise IndexRefusal(f"no tier {tier}")
        return self.tiers[tier]

    def begin(self, x):
        tid = next(self.ids)
        self.transfers[tid] = x
        return tid

    def pending(self, tid):
        """The pending transfer `tid`, which ends now; IndexRefusal for any other id."""
        x = self.transfers.pop(tid, None) if tid is not None else None
        if x is None:
            raise IndexRefusal(f"no pending transfer {tid!r}")
        if self.loading.get(x.sid) == tid:
            del self.loading[x.sid]
        return x

    def store(self, sid, block, tier):
        to, seq = self.tier(tier), self.seqs.get(sid)
        if block < 0:
            raise IndexRefusal(f"tier block {block}")
        self.ready(sid)
        end = (block + 1) * self.F
        if not self.written(seq, end):
            raise PendingRefusal(f"tier block {block} ends at row {end}; {seq.length} are written")
        chain = tuple(seq.tokens[:end])
        if tier == 2 and not self.tiers[1].ready(chain):
            raise EmptyRefusal("the host has no ready entry of that chain to copy to disk")
        if chain in to.entries:  # stored or on its way: nothing to copy
            if to.entries[chain].ready:
                to.touch(to.entries[chain])
            return None
        x = Transfer(True, tier, sid, [chain])
        x.dest = to.add(chain)
        if tier == 1:
            x.blocks = seq.table[block * self.factor:(block + 1) * self.factor]
            self.hold_sources(x.blocks)
        else:
            x.sources = [self.tiers[1].entries[chain]]
            x.sources[0].pins += 1
        return self.begin(x)

    def written(self, seq, end):
        """Whether seq holds every row up to `end`: a store reads only rows whose writes finished."""
        return seq.length >= end

    def hold_sources(self, blocks):
        """A host store holds its source blocks as a table does until it ends."""
        for b in blocks:
            self.pool.hold(b)

    def let_go(self, blocks):
        """A host store's end: its sources as a release leaves them (registered: evictable, else free), in order."""
        self.unhold(blocks)

    def continuation(self, seq, tier):
        """The chains of the tier blocks that continue seq's prompt from its rows and that `tier` can load now."""
        rows, prompt = seq.length, seq.prompt
        if rows % self.block_size or rows > len(prompt) or seq.tokens != prompt[:rows]:
            return []
        chains = []
        for end in range((rows // self.F + 1) * self.F, len(prompt) + 1, self.F):
            chain = tuple(prompt[:end])
            if not self.tiers[tier].ready(chain) or (tier == 2 and chain in self.tiers[1].entries):
                break
            chains.append(chain)
        return chains

    def load(self, sid, tier):
        source, seq = self.tier(tier), self.seqs.get(sid)
        self.ready(sid)
        chains = self.continuation(seq, tier)
        if not chains:
            raise EmptyRefusal(f"no tier block of tier {tier} continues the prompt from row {seq.length}")
        if tier == 1:
            blocks = self.load_blocks(seq, len(chains))
            x = Transfer(False, tier, sid, chains, blocks, seq.length)
        else:
            host = self.tiers[1]
            if not host.has_room(len(chains)):
                raise CapacityRefusal(f"the host has too little room for {len(chains)} entries")
            for chain in chains:
                host.add(chain)
            x = Transfer(False, tier, sid, chains, (), seq.length)
        x.sources = [source.entries[c] for c in chains]
        for entry in x.sources:
            source.touch(entry)
        self.pin(x.sources, 1)
        tid = self.begin(x)
        self.loading[sid] = tid
        self.loaded(seq, x)
        return tid

    def load_blocks(self, seq, count):
        """The device blocks a host load of `count` tier blocks writes: only those past seq's rows (a device hit and
        a tier hit never both land in one sequence), taken now into its table."""
        n = ((seq.length // self.F + count) * self.F - seq.length) // self.block_size
        if n > len(self.free) + len(self.evictable):
            raise CapacityRefusal(f"{n} blocks needed, {len(self.free)} free and {len(self.evictable)} evictable")
        fresh = [self.take() for _ in range(n)]
        seq.table += fresh
        return fresh

    def pin(self, entries, n):
        """A load pins (n = 1) the entries it reads until it ends (n = -1), so nothing evicts them mid-copy."""
        for entry in entries:
            entry.pins += n

    def loaded(self, seq, x):
        """After a load begins: its rows wait for the completion."""

    def may_evict(self, entry, room):
        """Eviction, or the room a store, a load or a put makes, takes only ready entries no transfer reads."""
        return entry.ready and entry.pins == 0

    def complete(self, tid):
        x = self.pending(tid)
        if x.store:
            if x.tier == 1:
                self.tiers[1].fill(x.dest, *self.pool.rows(x.blocks, self.F))
                self.let_go(x.blocks)
            else:
                self.tiers[2].fill(x.dest, *self.tiers[1].rows(x.sources[0]))
                x.sources[0].pins -= 1
            return
        self.pin(x.sources, -1)
        if x.tier == 1:
            self.arrive(self.seqs.live[x.sid], x)
            return
        host, disk = self.tiers[1], self.tiers[2]
        for chain, entry in zip(x.chains, x.sources):
            host.fill(host.entries[chain], *disk.rows(entry))
        disk.hit_rows += len(x.chains) * self.F

    def arrive(self, seq, x):
        """A host load's rows written into seq's new blocks, which fill with its prompt's tokens and register."""
        keys, values = zip(*(self.loaded_rows(entry) for entry in x.sources))
        skip = x.start % self.F  # the device holds the first tier block's first rows already
        k, v = np.concatenate(keys)[skip:], np.concatenate(values)[skip:]
        self.pool.write(seq.table, x.start, k, v)
        seq.length = x.start + len(k)
        seq.tokens += seq.prompt[x.start:seq.length]
        self.register_full_blocks(seq)
        self.tiers[1].hit_rows += len(k)

    def loaded_rows(self, entry):
        """The rows a host load reads from an entry, in row order."""
        return self.tiers[1].rows(entry)

    def fail(self, tid):
        x = self.pending(tid)
        if x.store:
            self.drop_failed(self.tiers[x.tier], x.chains[0])
            if x.tier == 1:
                self.let_go(x.blocks)
            else:
                x.sources[0].pins -= 1
            return []
        self.pin(x.sources, -1)
        if x.tier == 1:
            self.unload(self.seqs.live[x.sid], x)
        else:
            for chain in x.chains:
                self.tiers[1].drop(chain)
        return []  # load_failure=recompute: the sequence stays, to compute the rest

    def drop_failed(self, tier, chain):
        """A failed store's entry goes, its slot free again."""
        tier.drop(chain)

    def unload(self, seq, x):
        """A failed host load's blocks leave seq's table, last first (never registered, so free): seq holds what it
        held before the load."""
        for _ in x.blocks:
            self.unhold([seq.table.pop()])

    def evict(self, tier, count):
        if count < 1 or (tier != 0 and tier not in self.tiers):
            raise IndexRefusal(f"evict of {count} from tier {tier}")
        if tier == 0:
            if len(self.evictable) < count:
                raise CapacityRefusal(f"{len(self.evictable)} evictable blocks")
            for _ in range(count):  # the blocks an append would take first, free now
                block, _ = self.evictable.popitem(last=False)
                del self.registry[self.hash_of.pop(block)]
                self.free.append(block)
            return
        t = self.tiers[tier]
        if len(t.victims(room=False)) < count:
            raise CapacityRefusal(f"{len(t.victims(room=False))} evictable entries")
        for _ in range(count):
            t.evict_lru(room=False)

    def put(self, tier, tokens, k, v):
        t = self.tier(tier)
        if k.ndim != 2 or v.ndim != 2:
            raise ShapeRefusal(f"put: k and v must be 2-D, got {k.shape} and {v.shape}")
        k, v = steps(k, v, self.d_k, self.d_v)
        if len(tokens) != k.shape[0] or len(tokens) == 0 or len(tokens) % self.F:
            raise ShapeRefusal(f"put: {len(tokens)} tokens and {k.shape[0]} rows, not whole tier blocks of {self.F}")
        chains = [tuple(tokens[:end]) for end in range(self.F, len(tokens) + 1, self.F)]
        fresh = [c for c in chains if c not in t.entries]
        if not t.has_room(len(fresh), chains):
            raise CapacityRefusal(f"the tier has too little room for {len(fresh)} entries")
        for i, chain in enumerate(chains):
            if chain in fresh:
                t.fill(t.add(chain, chains), k[i * self.F:(i + 1) * self.F], v[i * self.F:(i + 1) * self.F])
            elif t.entries[chain].ready:
                t.touch(t.entries[chain])

    # The observation.

    def pending_transfers(self):
        return [(tid, x.blocks) for tid, x in self.transfers.items()]

    def entries(self, tier):
        t = self.tiers[tier]
        return [(chain, *t.rows(entry)) for chain, entry in t.entries.items() if entry.ready]

    def tier_counts(self, tier):
        return self.tiers[tier].counts()


class StoreReadsUnwrittenTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-store-reads-unwritten; vLLM #45704): a store is accepted once the tier
    block's device blocks are allocated, before their rows are all written, and copies what they hold when it
    completes, under the chain of the rows there were."""

    def written(self, seq, end):
        return len(seq.table) * self.block_size >= end


class ReusePendingSourceTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-reuse-pending-source; vLLM #46951): a pending store holds nothing, so its
    source blocks go back to the pool with their sequence and another request may take and write them mid-copy."""

    def hold_sources(self, blocks):
        pass

    def let_go(self, blocks):
        pass


class LoadSourceUnpinnedTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-load-source-unpinned; SGLang PR #27444): a load pins nothing, so an
    eviction or the room a put makes can take the entry it is reading."""

    def pin(self, entries, n):
        pass


class RoomIgnoresPinsTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-room-ignores-pins; SGLang PRs #27631, #31427): the room a store, a load
    or a put makes evicts entries pending loads are reading (an evict op still respects the pins)."""

    def may_evict(self, entry, room):
        return entry.ready and (room or entry.pins == 0)


class LayoutTransposedTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-layout-transposed; TensorRT-LLM #6507): a tier block is written device
    block after device block and read back row-interleaved (exact when host_factor or block_size is 1)."""

    def loaded_rows(self, entry):
        k, v = super().loaded_rows(entry)
        order = [r * self.factor + j for j in range(self.factor) for r in range(self.block_size)]
        return k[order], v[order]


class OverlapDeviceHitTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-overlap-device-hit; LMCache #2206): a load whose first tier block
    straddles the device hit takes new blocks for the whole tier block, giving up the device-hit blocks in it."""

    def load_blocks(self, seq, count):
        first = seq.length // self.F * self.F
        n = count * self.F // self.block_size
        if n > len(self.free) + len(self.evictable):
            raise CapacityRefusal(f"{n} blocks needed, {len(self.free)} free and {len(self.evictable)} evictable")
        fresh = [self.take() for _ in range(n)]
        kept = first // self.block_size
        self.unhold(seq.table[kept:])
        del seq.table[kept:], seq.tokens[first:], seq.hashes[kept:]
        seq.length = first
        seq.table += fresh
        return fresh


class ConsumedBeforeLoadTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-consumed-before-load; LMCache #4133): a host load's rows are the
    sequence's at once, holding whatever their blocks held, until the load ends."""

    def loaded(self, seq, x):
        if x.tier == 1:
            seq.length = x.start + len(x.blocks) * self.block_size
            seq.tokens = seq.prompt[:seq.length]

    def arrive(self, seq, x):
        seq.length = x.start
        del seq.tokens[x.start:]
        super().arrive(seq, x)

    def unload(self, seq, x):
        seq.length = x.start
        del seq.tokens[x.start:]
        super().unload(seq, x)


class FailedLoadKeepsLengthTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-failed-load-keeps-length; vLLM #49250): a failed host load keeps its blocks
    and the length it would have reached, their rows never written."""

    def unload(self, seq, x):
        seq.length = x.start + len(x.blocks) * self.block_size
        seq.tokens += seq.prompt[x.start:seq.length]


class PendingEntryEvictableTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-pending-entry-evictable; SGLang PR #28468): a store's pending entry counts
    as evictable, so eviction frees a slot a copy is still writing."""

    def may_evict(self, entry, room):
        return entry.pins == 0


class FailedStoreLeaksSlotTiered(TieredCache):
    """Seeded bug (docs/mutants.md, tiered-failed-store-leaks-slot; vLLM PR #48102): a failed store drops its entry but
    keeps its slot reserved."""

    def drop_failed(self, tier, chain):
        del tier.entries[chain]
