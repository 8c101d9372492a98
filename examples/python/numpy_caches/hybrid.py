"""A numpy hybrid cache (hybrid kind): full, sliding, shared and cross-attention layers whose groups share one block
pool; a twin that applies the sliding window to the full layers too."""
import numpy as np
from kvconform_port import CapacityRefusal, HybridAdapter, IndexRefusal, ShapeRefusal

from .blocks import Sequences
from .common import attend

GROUPS = ("full", "sliding", "cross")


def layer_plan(c):
    """Per layer: (type, the layer whose rows it reads, its group, its producer's place among the group's writers)."""
    def pattern(i):
        glob = c["global_every"] > 0 and (i + 1) % c["global_every"] == 0
        return "sliding" if c["window"] > 0 and not glob else "full"
    writers = c["layers"] - c["shared"]
    plan, places = [], {"full": 0, "sliding": 0}
    for i in range(writers):
        t = pattern(i)
        plan.append((t, i, t, places[t]))
        places[t] += 1
    for i in range(writers, c["layers"]):
        same = [j for j in range(writers) if plan[j][0] == pattern(i)]
        source = same[-1] if same else writers - 1
        plan.append(("shared", source, plan[source][2], plan[source][3]))
    if c["cross"] > 0:
        plan.append(("cross", c["layers"], "cross", 0))
    return plan


class Sequence:
    """A block table per group (None where the window has passed a block) and the decoder rows written."""

    def __init__(self, tables=None, length=0, tokens=()):
        self.tables = {g: list(t) for g, t in (tables or {g: [] for g in GROUPS}).items()}
        self.length, self.tokens = length, list(tokens)


class HybridCache(HybridAdapter):
    """Blocks hold block_size positions of every writing layer of the group that took them; a sequence's sliding
    table drops a block once it holds neither a sink nor a window row at the sequence's new length. With prefix
    caching, a block that fills is registered under the tokens up to its end while a table holds it."""

    supports_prefix = True

    def __init__(self, config):
        super().__init__(config)
        c = config
        self.bs, self.d_k, self.d_v = c["block_size"], c["d_k"], c["d_v"]
        self.window, self.keep, self.encoder = c["window"], c["keep"], c["cross"]
        self.plan = layer_plan(c)
        self.writers = [l for l, p in enumerate(self.plan) if p[0] in ("full", "sliding")]
        width = max([sum(1 for p in self.plan if p[0] == g) for g in ("full", "sliding")] + [1])
        self.k_pool = np.full((c["capacity"], self.bs, width, self.d_k), np.nan)
        self.v_pool = np.full((c["capacity"], self.bs, width, self.d_v), np.nan)
        self.refs = np.zeros(c["capacity"], dtype=np.int64)
        self.owner = [None] * c["capacity"]
        self.free = list(range(c["capacity"] - 1, -1, -1))  # pop() takes the lowest
        self.seqs = Sequences()
        self.prefix, self.registered, self.prefix_of = c["prefix_caching"], {"full": {}, "sliding": {}}, {}

    def windowed(self, group):
        return group == "sliding"

    def needed(self, group, j, n):
        """Whether `group` of a sequence of n rows needs its block j."""
        if not self.windowed(group) or self.window == 0:
            return True
        return j * self.bs < self.keep or (j + 1) * self.bs + self.window - self.keep > n

    def create(self, k, v, tokens):
        e = self.encoder
        if k.ndim != 2 or v.ndim != 2 or k.shape != (e, self.d_k) or v.shape != (e, self.d_v):
            raise ShapeRefusal(f"the encoder's rows must be ({e}, {self.d_k}) and ({e}, {self.d_v})")
        need = -(-e // self.bs)
        if need > len(self.free):
            raise CapacityRefusal(f"the pool has {len(self.free)} free blocks, the encoder needs {need}")
        seq = Sequence()
        seq.tables["cross"] = [self.take("cross") for _ in range(need)]
        for p in range(e):
            self.write(seq, "cross", 0, p, k[p], v[p])
        if self.prefix:
            self.hit(seq, list(tokens))
        return self.seqs.add(seq)

    def hit(self, seq, tokens):
        """The longest whole-block prefix of tokens the full group holds, shortened until the sliding group holds the
        blocks its window reads at that length; seq shares them."""
        groups = [g for g in ("full", "sliding") if any(self.plan[l][2] == g for l in self.writers)]

        def found(m):
            return all(tuple(tokens[:(j + 1) * self.bs]) in self.registered[g]
                       for g in groups for j in range(m) if self.needed(g, j, self.hit_window(m * self.bs)))
        m = len(tokens) // self.bs
        while m > 0 and not found(m):
            m -= 1
        seq.length, seq.tokens = m * self.bs, tokens[:m * self.bs]
        for g in groups:
            seq.tables[g] = [None] * m
            for j in range(m):
                if self.needed(g, j, self.hit_window(seq.length)):
                    seq.tables[g][j] = self.registered[g][tuple(tokens[:(j + 1) * self.bs])]
                    self.refs[seq.tables[g][j]] += 1

    def hit_window(self, n):
        """The length whose window a hit of n rows holds: its own."""
        return n

    def fork(self, sid):
        seq = self.seqs.get(sid)
        for t in seq.tables.values():
            for b in t:
                if b is not None:
                    self.refs[b] += 1
        return self.seqs.add(Sequence(seq.tables, seq.length, seq.tokens))

    def release(self, sid):
        for t in self.seqs.get(sid).tables.values():
            for b in t:
                if b is not None:
                    self.drop(b)
        del self.seqs.live[sid]

    def append(self, sid, k, v, tokens):
        self.extend(self.seqs.get(sid), k, v, tokens, False)

    def prefill(self, sid, k, v, tokens, q):
        """The append, whose q (layers, n, d_k) holds each layer's query of each step: it attends the rows its layer
        reads at the step's row; the sliding group gives back the blocks its window passed once they were read."""
        seq, n = self.seqs.get(sid), k.shape[1] if k.ndim == 3 else 0
        if q.ndim != 3 or q.shape != (len(self.plan), n, self.d_k):
            raise ShapeRefusal(f"q must be ({len(self.plan)}, {n}, {self.d_k}), got shape {q.shape}")
        before, span = seq.length, self.window - self.keep
        held = {g: self.reads(seq, g, before) for g in GROUPS}  # what each layer read before the prefill
        self.extend(seq, k, v, tokens, True)
        outputs, weights = [], []
        for l, (_, _, g, place) in enumerate(self.plan):
            at = held[g] + ([] if g == "cross" else list(range(before, before + n)))
            slides = self.windowed(g) and self.window > 0
            for i in range(n):
                row = before + i
                live = np.array([g == "cross" or (p <= row and (not slides or p < self.keep or p + span > row))
                                 for p in at])
                w = np.zeros(len(at))  # a row the query does not read may lie in a block already given back
                out, w[live] = self.attend_layer(l, *self.rows_at(seq, g, place, np.asarray(at)[live]), q[l, i])
                outputs.append(out), weights.append(w)
        self.after_queries(seq)
        return np.concatenate(outputs), np.concatenate(weights)

    def after_queries(self, seq):
        """The sliding blocks the window passed, given back once the prefill's queries read them."""
        t = seq.tables["sliding"]
        for j, b in enumerate(t):
            if b is not None and not self.needed("sliding", j, seq.length):
                self.drop(b)
                t[j] = None

    def extend(self, seq, k, v, tokens, prefill):
        """Appends k and v's steps to seq; a prefill plans the window at its first query's row, so that the rows its
        queries read stay held while they attend."""
        w = len(self.writers)
        if k.ndim != 3 or v.ndim != 3 or k.shape[0] != w or v.shape[0] != w or k.shape[1] != v.shape[1] or \
                k.shape[2] != self.d_k or v.shape[2] != self.d_v:
            raise ShapeRefusal(f"k and v must be ({w}, n, {self.d_k}) and ({w}, n, {self.d_v})")
        n = k.shape[1]
        if self.prefix and len(tokens) != n:
            raise ShapeRefusal(f"{len(tokens)} tokens for {n} steps")
        if n == 0:
            return
        self.step_start(seq)
        at = seq.length + 1 if prefill else seq.length + n
        plans = {g: self.planned(seq, g, n, at) for g in ("full", "sliding") if any(self.plan[l][2] == g
                                                                                   for l in self.writers)}
        need = sum(len(take) + copy for _, take, copy in plans.values())
        freed = sum(self.refs[seq.tables[g][j]] == 1 for g, (drop, _, _) in plans.items() for j in drop)
        if need > len(self.free) + freed:
            raise CapacityRefusal(f"{need} blocks needed, {len(self.free)} free and {freed} the window frees")
        for g, (drop, _, _) in plans.items():
            for j in drop:
                self.drop(seq.tables[g][j])
                seq.tables[g][j] = None
        for g, (_, take, copy) in plans.items():
            self.grow(seq, g, n, take, copy)
        for i in range(n):
            p = seq.length + i
            for wi, l in enumerate(self.writers):
                _, _, g, place = self.plan[l]
                if p // self.bs < len(seq.tables[g]) and seq.tables[g][p // self.bs] is not None:
                    self.write(seq, g, place, p, k[wi, i], v[wi, i])
        before, seq.length = seq.length, seq.length + n
        if self.prefix:
            seq.tokens += list(tokens)
            for g in plans:  # register the blocks whose last row this append wrote
                for j in range(before // self.bs, seq.length // self.bs):
                    key, b = tuple(seq.tokens[:(j + 1) * self.bs]), seq.tables[g][j]
                    if b is not None and b not in self.prefix_of and key not in self.registered[g]:
                        self.registered[g][key], self.prefix_of[b] = b, (g, key)

    def step_start(self, seq):
        """Before an append plans (and before it can be refused for room): nothing here."""

    def planned(self, seq, g, n, at):
        """(blocks to drop, blocks to take, whether to copy the shared partly filled last block) for n more rows, the
        window taken at length `at`."""
        t, to = seq.tables[g], seq.length + n
        held = [j < len(t) and t[j] is not None for j in range(-(-to // self.bs))]
        drop = [j for j, h in enumerate(held) if h and not self.needed(g, j, at)]
        take = [j for j, h in enumerate(held) if not h and self.needed(g, j, at)]
        last = seq.length // self.bs
        copy = seq.length % self.bs != 0 and self.needed(g, last, at) and held[last] and self.refs[t[last]] > 1
        return drop, take, int(copy)

    def grow(self, seq, g, n, take, copy):
        t = seq.tables[g]
        t.extend([None] * (-(-(seq.length + n) // self.bs) - len(t)))
        if copy:
            last = seq.length // self.bs
            shared, own = t[last], self.take(g)
            self.k_pool[own], self.v_pool[own] = self.k_pool[shared], self.v_pool[shared]
            self.drop(shared)  # still held by another table
            t[last] = own
        for j in take:
            t[j] = self.take(g)

    def take(self, group):
        block = self.free.pop()
        self.refs[block], self.owner[block] = 1, group
        return block

    def drop(self, block):
        self.refs[block] -= 1
        if self.refs[block] == 0:
            self.k_pool[block], self.v_pool[block] = np.nan, np.nan
            self.owner[block] = None
            if block in self.prefix_of:  # a freed block is no longer found
                g, key = self.prefix_of.pop(block)
                del self.registered[g][key]
            self.free.append(block)

    def write(self, seq, g, place, p, k, v):
        b = seq.tables[g][p // self.bs]
        self.k_pool[b, p % self.bs, place], self.v_pool[b, p % self.bs, place] = k, v

    def rows(self, sid, layer):
        """The keys and values layer `layer` of `sid` reads, in order."""
        seq = self.seqs.get(sid)
        if not isinstance(layer, int) or not 0 <= layer < len(self.plan):
            raise IndexRefusal(f"no layer {layer!r}")
        _, _, g, place = self.plan[layer]
        return self.rows_at(seq, g, place, self.reads(seq, g, seq.length))

    def reads(self, seq, g, n):
        """The positions a layer of group g of seq reads at n rows (the cross group: the encoder's), those its blocks
        hold."""
        n, span, t = self.encoder if g == "cross" else n, self.window - self.keep, seq.tables[g]
        return [p for p in range(n) if not (self.windowed(g) and self.window and self.keep <= p and
                                            (p < n - span or p // self.bs >= len(t) or t[p // self.bs] is None))]

    def rows_at(self, seq, g, place, positions):
        blocks = np.asarray([seq.tables[g][p // self.bs] for p in positions], dtype=np.int64)
        offsets = np.asarray(positions, dtype=np.int64) % self.bs
        return self.k_pool[blocks, offsets, place].reshape(-1, self.d_k), \
            self.v_pool[blocks, offsets, place].reshape(-1, self.d_v)

    def decode(self, sid, layer, q):
        return self.attend_layer(layer, *self.rows(sid, layer), q)

    def attend_layer(self, layer, keys, values, q):
        """One attention of layer `layer` (a cache with another attention overrides it)."""
        return attend(keys, values, q)

    def keys(self, sid, layer):
        return self.rows(sid, layer)[0]

    def values(self, sid, layer):
        return self.rows(sid, layer)[1]

    def block_table(self, sid, layer):
        kind, _, g, _ = self.plan[layer]
        return [] if kind == "shared" else [b for b in self.seqs.get(sid).tables[g] if b is not None]

    def ref_counts(self):
        return {int(b): int(self.refs[b]) for b in np.flatnonzero(self.refs)}

    def free_blocks(self):
        return len(self.free)

    def group_blocks(self, group):
        return sum(1 for b, g in enumerate(self.owner) if g == group)


class GlobalWindowedHybrid(HybridCache):
    """Seeded bug (docs/mutants.md, hybrid-global-layers-windowed): the sliding window is applied to the full layers
    too, which lose their old rows (vLLM #51756)."""

    def windowed(self, group):
        return group != "cross"
