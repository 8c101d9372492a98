"""vLLM v1's prefix caching as a kvconform prefix cache: its block pool's structures (one free block queue in release
order, a hash-to-blocks map that keeps duplicates, a hit that stops before the last token, the blocks of rejected
drafts kept by their request) and the glue a port adds (a fork by copy-on-write, refusals that change nothing)."""
import collections
import hashlib

from kvconform_port import CapacityRefusal, HitRows, PrefixAdapter, free_and_evictable

from numpy_caches.blocks import BlockPool, Sequences
from numpy_caches.common import rollback_count, token_steps

from .views import TableViews


class Block:
    """KVCacheBlock: its reference count and, once full and cached, its hash."""

    def __init__(self, block_id):
        self.block_id, self.ref_cnt, self.block_hash = block_id, 0, None


class Request:
    """A request's blocks (req_to_blocks, never shortened until it ends), its computed tokens and their block hashes,
    and its cache salt."""

    def __init__(self, salt):
        self.blocks, self.tokens, self.hashes, self.salt, self.length = [], [], [], salt, 0


class VllmPrefixCache(TableViews, PrefixAdapter):
    """The choices vLLM v1 makes (vllm/v1/core/block_pool.py, kv_cache_manager.py) before PR #42656: a hit covers at
    most num_tokens - 1 tokens (get_computed_blocks); every full block is cached even when its hash is cached already
    (BlockHashToBlockMap keeps duplicates, NOTE #1) and a lookup takes the earliest still cached; every freed block
    joins the tail of one queue, a request's last block first, and an allocation pops the head, evicting it if
    cached; a rejected draft's blocks stay with the request until it ends."""

    policies = {"hit_limit": "all_but_last", "duplicates": "registered", "free_order": "one_queue",
                "rollback_blocks": "kept"}
    supports_extra_keys = True

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v, self.bs = config["d_k"], config["d_v"], config["block_size"]
        self.pool = BlockPool(config["capacity"], self.bs, self.d_k, self.d_v)  # the GPU memory
        self.blocks = [Block(b) for b in range(config["capacity"])]
        self.free_queue = collections.OrderedDict((b, None) for b in range(config["capacity"]))
        self.cached = {}  # block hash -> {block_id: block}, the earliest cached first
        self.requests = Sequences()
        self.hit_rows = HitRows()  # observed as self.hit_rows()

    @staticmethod
    def hash_block(parent, tokens, extra):
        """hash_block_tokens: the parent's hash, the block's tokens and its extra keys."""
        return hashlib.sha256(repr((parent, tuple(tokens), extra)).encode()).digest()

    def block_hashes(self, tokens, salt, start=0, parent=None):
        """The hashes of the full blocks of tokens from block `start`; the salt is an extra key of block 0 only."""
        out = []
        for i in range(start, len(tokens) // self.bs):
            parent = self.hash_block(parent, tokens[i * self.bs:(i + 1) * self.bs], (salt,) if i == 0 else ())
            out.append(parent)
        return out

    # The block pool.
    def touch(self, block):
        if block.ref_cnt == 0:
            del self.free_queue[block.block_id]
        block.ref_cnt += 1

    def get_new_block(self):
        block = self.blocks[self.free_queue.popitem(last=False)[0]]
        if block.block_hash is not None:  # _maybe_evict_cached_block: only this block leaves its hash's entry
            entry = self.cached[block.block_hash]
            del entry[block.block_id]
            if not entry:
                del self.cached[block.block_hash]
            block.block_hash = None
        block.ref_cnt = 1
        return block

    def free_blocks_of(self, blocks):
        for block in blocks:
            block.ref_cnt -= 1
            if block.ref_cnt == 0:
                self.free_queue[block.block_id] = None  # the tail, cached or not (before PR #42656)

    # The ops.
    def find_longest_cache_hit(self, hashes):
        """The earliest cached block of each hash, up to the first hash none holds."""
        hits = []
        for h in hashes:
            entry = self.cached.get(h)
            if not entry:
                break
            hits.append((h, next(iter(entry.values()))))
        return hits

    def create(self, tokens, extra_key):
        req = Request(extra_key)
        for h, block in self.find_longest_cache_hit(self.block_hashes(list(tokens[:max(len(tokens) - 1, 0)]),
                                                                      extra_key)):  # the last token recomputed
            self.touch(block)
            req.blocks.append(block)
            req.hashes.append(h)
        req.length = len(req.blocks) * self.bs
        req.tokens = list(tokens[:req.length])
        self.hit_rows.add(req.length)
        return self.requests.add(req)

    def fork(self, sid):
        parent = self.requests.get(sid)
        child = Request(parent.salt)
        child.blocks = parent.blocks[:-(-parent.length // self.bs)]  # not the blocks a rollback kept
        for block in child.blocks:
            block.ref_cnt += 1
        child.tokens, child.hashes, child.length = list(parent.tokens), list(parent.hashes), parent.length
        return self.requests.add(child)

    def release(self, sid):
        self.free_blocks_of(reversed(self.requests.get(sid).blocks))
        del self.requests.live[sid]

    def rollback(self, sid, count):
        req = self.requests.get(sid)
        req.length -= rollback_count(count, req.length)  # num_computed_tokens -= num_rejected: the blocks stay
        del req.tokens[req.length:], req.hashes[req.length // self.bs:]

    def must_copy(self, req, j):
        """Whether the write into table entry j copies it first: another table holds it, or it is cached (a cached
        block stays what its hash says)."""
        block = req.blocks[j]
        return (j + 1) * self.bs > req.length and (block.ref_cnt > 1 or block.block_hash is not None)

    def append(self, sid, k, v, tokens):
        k, v = token_steps(k, v, tokens, self.d_k, self.d_v, lambda: self.requests.get(sid))
        req, n = self.requests.get(sid), k.shape[0]
        if n == 0:
            return
        last = (req.length + n - 1) // self.bs
        copies = [j for j in range(req.length // self.bs, min(last + 1, len(req.blocks))) if self.must_copy(req, j)]
        need = len(copies) + max(0, last + 1 - len(req.blocks))
        if need > len(self.free_queue):
            raise CapacityRefusal(f"{need} blocks needed, {len(self.free_queue)} in the free queue")
        fresh = [self.get_new_block() for _ in range(need)]
        for j in copies:
            old, req.blocks[j] = req.blocks[j], fresh.pop(0)
            self.pool.copy(old.block_id, req.blocks[j].block_id)
            self.free_blocks_of([old])
        req.blocks += fresh
        self.pool.write([b.block_id for b in req.blocks], req.length, k, v)
        req.length += n
        req.tokens += list(tokens)
        self.cache_full_blocks(req)

    def cache_full_blocks(self, req):
        """Every block that filled gets its hash and joins the map, whatever is cached under that hash already."""
        parent = req.hashes[-1] if req.hashes else None
        for h in self.block_hashes(req.tokens, req.salt, len(req.hashes), parent):
            block = req.blocks[len(req.hashes)]
            req.hashes.append(h)
            block.block_hash = h
            self.cached.setdefault(h, {})[block.block_id] = block

    # What the harness observes (TableViews reads the rows through these).
    def table(self, sid):
        return [block.block_id for block in self.requests.get(sid).blocks]

    def length(self, sid):
        return self.requests.get(sid).length

    def ref_counts(self):
        return {b.block_id: b.ref_cnt for b in self.blocks if b.ref_cnt > 0}

    def holds_prefix(self, block_id):
        """Whether a block in the free queue still holds a cached prefix: evictable rather than free."""
        return self.blocks[block_id].block_hash is not None

    def free_blocks(self):
        return free_and_evictable(self.free_queue, self.holds_prefix)[0]

    def evictable_blocks(self):
        return free_and_evictable(self.free_queue, self.holds_prefix)[1]


class VllmEaglePrefixCache(VllmPrefixCache):
    """vLLM v1 serving EAGLE drafts: FullAttentionManager.find_longest_cache_hit drops the last matched block too (the
    drafter needs the hidden states of the last block's tokens again)."""

    policies = dict(VllmPrefixCache.policies, hit_limit="all_but_last_block")

    def find_longest_cache_hit(self, hashes):
        return super().find_longest_cache_hit(hashes)[:-1]
