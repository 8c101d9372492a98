"""A numpy radix cache (radix kind): SGLang's tree of pages over the prefix cache's pool and scheduler phases, and
twins breaking one rule each, after the engine reports docs/kinds/radix.md names."""
import itertools

from kvconform_port import CapacityRefusal, RadixAdapter

from .prefix import PrefixCache


class Run:
    """A node of the tree: the pages one append registered, split where a hit, another chain or a table's holding
    ends; among runs used at once, the one made first is evicted first, as the kind's model does."""

    def __init__(self, pages, parent, stamp, made):
        self.pages, self.parent, self.children, self.stamp, self.made = list(pages), parent, set(), stamp, made


class RunTree:
    """Runs of registered pages, each with the last time it was used: SGLang's radix tree counted in pages."""

    def __init__(self):
        self.run_of, self.runs = {}, {}  # page -> its run; made -> run, oldest first
        self.clock, self.made = itertools.count(1), itertools.count()
        self.growing = None  # the run the current insert registers into

    def make(self, pages, parent, stamp):
        run = Run(pages, parent, stamp, next(self.made))
        self.runs[run.made] = run
        if parent is not None:
            parent.children.add(run)
        for p in pages:
            self.run_of[p] = run
        return run

    def add(self, page, parent_page):
        """A newly registered page under the chain of `parent_page` (None: at the root)."""
        parent = self.run_of.get(parent_page)
        if parent is not None and parent is self.growing:  # one insert's pages make one run
            parent.pages.append(page)
            self.run_of[page] = parent
            return
        if parent is not None:  # a chain branching off inside a run splits it there
            self.cut_after(parent_page)
        self.growing = self.make([page], parent, next(self.clock))

    def split(self, run, keep):
        """run keeps its first `keep` pages; the rest becomes its only child, with its children and its stamp."""
        rest, run.pages = run.pages[keep:], run.pages[:keep]
        children, run.children = run.children, set()
        tail = self.make(rest, run, run.stamp)
        tail.children = children
        for c in children:
            c.parent = tail
        if self.growing is run:
            self.growing = tail

    def cut_after(self, page):
        run = self.run_of[page]
        at = run.pages.index(page) + 1
        if at < len(run.pages):
            self.split(run, at)

    def use(self, pages):
        """SGLang's match_prefix and insert walk a path: its runs used now, the one it ends inside split there."""
        now = next(self.clock)
        for p in pages:
            if p in self.run_of:
                self.run_of[p].stamp = now
        if pages and pages[-1] in self.run_of:
            self.cut_after(pages[-1])

    def settle(self, held):
        """A run whose first pages alone some table holds splits where the holding ends: a lock is on whole nodes."""
        for run in list(self.runs.values()):
            h = [held(p) for p in run.pages]
            if h[0] and not all(h):
                self.split(run, h.index(False))

    def lru_leaf(self, held):
        leaves = [r for r in self.runs.values() if not r.children and not held(r.pages[0])]
        return min(leaves, key=lambda r: (r.stamp, r.made), default=None)

    def remove(self, run):
        del self.runs[run.made]
        if run.parent is not None:
            run.parent.children.discard(run)
        for p in run.pages:
            del self.run_of[p]


class RadixCache(PrefixCache, RadixAdapter):
    """PrefixCache's pool, chains and phases under SGLang's rules: a page that fills under a chain the tree holds is
    replaced in its table by the tree's page (its own goes free), an allocation short of free pages evicts whole least
    recently used leaves no table holds. The tree's runs are used by every match and insert that walks them and split
    where a table's holding ends."""

    supports_extra_keys = False

    def __init__(self, config):
        super().__init__(config)
        self.tree = RunTree()

    def walk(self, pages):
        self.tree.use(pages)

    def settle(self):
        self.tree.settle(self.held)

    def register_full_blocks(self, seq):
        """SGLang's cache_unfinished_req, page by page: each page the append filled is registered under its chain, or
        adopted when the tree holds that chain; then the path of full pages is used."""
        bs, self.tree.growing = self.block_size, None
        for j in range(len(seq.hashes), seq.length // bs):
            seq.hashes.append(self.chain_hash(seq.hashes[-1] if seq.hashes else seq.root,
                                              seq.tokens[j * bs:(j + 1) * bs]))
            kept = self.registry.get(seq.hashes[-1])
            if kept is None:
                self.registry[seq.hashes[-1]], self.hash_of[seq.table[j]] = seq.table[j], seq.hashes[-1]
                self.tree.add(seq.table[j], seq.table[j - 1] if j else None)
            else:
                self.adopt(seq, j, kept)
        self.tree.use(seq.table[:seq.length // bs])

    def adopt(self, seq, j, kept):
        """The table takes the tree's page of the chain before its own goes free (SGLang re-points req_to_token)."""
        self.evictable.pop(kept, None)
        self.pool.hold(kept)
        own, seq.table[j] = seq.table[j], kept
        self.unhold([own])

    def allocate(self, n):
        """n pages, held once: whole leaves evicted first until n are free (SGLang evicts the shortfall only)."""
        while len(self.free) < n:
            run = self.tree.lru_leaf(self.held)
            if run is None:  # only counts that drifted from the tree (a twin's) get here
                raise CapacityRefusal("no leaf of the tree to evict")
            self.evict(run)
        return [self.take() for _ in range(n)]

    def evict(self, run):
        """A leaf leaves the tree whole: its chains are no longer found and its pages are free."""
        for p in run.pages:
            del self.registry[self.hash_of.pop(p)]
            self.evictable.pop(p, None)
            self.free.append(p)
        self.tree.remove(run)

    def take(self):
        block = self.free.pop()
        self.pool.hold(block)
        return block

    def protected_blocks(self):
        return sum(self.held(p) for p in self.hash_of)


class AdmitStaleHitRadix(RadixCache):
    """Seeded bug (docs/mutants.md, radix-admit-stale-hit; vLLM #37076): an admit holds the pages its lookup found,
    however other requests' allocations and inserts changed the tree since."""

    def lookup(self, tokens, extra_key=0):
        sid = super().lookup(tokens, extra_key)
        seq = self.seqs.live[sid]
        seq.found = self.match(seq.prompt, seq.root)
        return sid

    def rematch(self, seq):
        return getattr(seq, "found", ([], []))

    def retract(self, sid):
        super().retract(sid)
        self.seqs.live[sid].found = ([], [])  # looked up by nobody since


class RegistersBeforeWriteRadix(RadixCache):
    """Seeded bug (docs/mutants.md, radix-registers-before-write; vLLM PR #37152): the pages an admit takes are
    registered under its prompt's chains at once, before an append writes their rows."""

    def admit(self, sid, count):
        super().admit(sid, count)
        seq, bs, self.tree.growing = self.seqs.live[sid], self.block_size, None
        chain = seq.hashes[-1] if seq.hashes else seq.root
        for j in range(len(seq.hashes), min(len(seq.table), len(seq.prompt) // bs)):
            chain = self.chain_hash(chain, seq.prompt[j * bs:(j + 1) * bs])
            if chain not in self.registry:
                self.registry[chain], self.hash_of[seq.table[j]] = seq.table[j], chain
                self.tree.add(seq.table[j], seq.table[j - 1] if j else None)


class LockSkipsMatchedNodeRadix(RadixCache):
    """Seeded bug (docs/mutants.md, radix-lock-skips-matched-node; mini-sglang PR #52): the lock starts at the
    matched node's parent, so the hit's last page is not held while the request reads it."""

    def lock(self, seq, pages, chains):
        super().lock(seq, pages, chains)
        if pages:
            self.unhold([pages[-1]])


class DuplicateFreedUnmappedRadix(RadixCache):
    """Seeded bug (docs/mutants.md, radix-duplicate-freed-unmapped; mini-sglang PR #142): a page that fills under a
    chain the tree holds is freed while the table still points at it, the tree's page held for nobody."""

    def adopt(self, seq, j, kept):
        self.evictable.pop(kept, None)
        self.pool.hold(kept)
        self.unhold([seq.table[j]])
