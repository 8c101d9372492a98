"""SGLang's RadixCache as a kvconform prefix cache: a radix tree of pages (page_size = the block size) whose nodes are
the runs one insert added, a match capped before the last token, duplicates adopted from the tree, and eviction of
whole least recently used leaves; with the glue a port adds (a fork by copy-on-write, refusals that change nothing,
each node held whole or not at all, as a lock on a node split where a request's rows end)."""
from kvconform_port import CapacityRefusal, HitRows, PrefixAdapter

from numpy_caches.blocks import BlockPool, Sequences
from numpy_caches.common import rollback_count, token_steps

from .views import TableViews


class TreeNode:
    """A run of pages: `key` their token pages, `value` the page ids, with its parent, children by their first page
    (and the extra key), and last_access_time."""

    def __init__(self, parent=None, key=(), value=(), stamp=0, extra_key=0):
        self.parent, self.children, self.key, self.value = parent, {}, list(key), list(value)
        self.last_access_time, self.extra_key = stamp, extra_key


class Request:
    def __init__(self, extra_key):
        self.pages, self.tokens, self.length, self.extra_key = [], [], 0, extra_key


class SglangPrefixCache(TableViews, PrefixAdapter):
    """The choices SGLang makes (python/sglang/srt/mem_cache/radix_cache.py, managers/schedule_batch.py): a match
    covers at most len - 1 tokens (Req._compute_max_prefix_len); after each append the request's full pages are
    inserted and those the tree had already are freed, the request's table re-pointed at the tree's
    (cache_unfinished_req); evict() pops the least recently used unlocked leaf, whole, until the shortfall is freed
    (PR #32016), and a parent left childless joins the heap. A match stamps its path and the node it splits; a
    release inserts the request again (cache_finished_req), stamping its path."""

    policies = {"hit_limit": "all_but_last", "duplicates": "adopted", "eviction": "leaf"}
    supports_extra_keys = True

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v, self.bs = config["d_k"], config["d_v"], config["block_size"]
        self.pool = BlockPool(config["capacity"], self.bs, self.d_k, self.d_v)
        self.free = list(range(config["capacity"] - 1, -1, -1))  # the page allocator's free list
        self.refs = [0] * config["capacity"]  # tables holding each page (the port's fork and copy-on-write)
        self.node_of = {}  # a page in the tree -> its node
        self.root, self.clock = TreeNode(), 0
        self.requests = Sequences()
        self.hit_rows = HitRows()  # observed as self.hit_rows()

    def pages_of(self, tokens):
        return [tuple(tokens[i:i + self.bs]) for i in range(0, len(tokens) - self.bs + 1, self.bs)]

    def tick(self):
        self.clock += 1  # time.monotonic(): later calls, later stamps
        return self.clock

    # The radix tree.
    def split(self, node, n):
        """_split_node: a new node holds the first n pages, its child the rest (both keep the node's stamp)."""
        head = TreeNode(node.parent, node.key[:n], node.value[:n], node.last_access_time, node.extra_key)
        node.parent.children[self.child_key(node)] = head
        node.key, node.value, node.parent = node.key[n:], node.value[n:], head
        head.children[self.child_key(node)] = node
        for p in head.value:
            self.node_of[p] = head
        return head

    def child_key(self, node):
        return node.extra_key, node.key[0]

    def walk(self, pages, extra_key):
        """The longest prefix of `pages` the tree holds (match_prefix and insert alike): every node visited stamped
        now, the one the match ends inside split there. Returns the last node, the tree's pages and the pages
        matched."""
        stamp, node, tree_pages, matched = self.tick(), self.root, [], 0
        while matched < len(pages) and (extra_key, pages[matched]) in node.children:
            child = node.children[(extra_key, pages[matched])]
            child.last_access_time = stamp
            n = 0
            while n < len(child.key) and matched + n < len(pages) and child.key[n] == pages[matched + n]:
                n += 1
            if n < len(child.key):
                child = self.split(child, n)
            tree_pages += child.value
            node, matched = child, matched + n
        return node, tree_pages, matched

    def match_prefix(self, pages, extra_key):
        return self.walk(pages, extra_key)[1]

    def insert(self, pages, values, extra_key):
        """The pages already in the tree for `pages` (their prefix there), the rest added as one new leaf."""
        node, tree_pages, matched = self.walk(pages, extra_key)
        pages, values = pages[matched:], values[matched:]
        if pages:
            leaf = TreeNode(node, pages, values, self.tick(), extra_key)
            node.children[(extra_key, pages[0])] = leaf
            for p in values:
                self.node_of[p] = leaf
            tree_pages += values
        return tree_pages

    def locked(self, node):
        return any(self.refs[p] > 0 for p in node.value)

    def evict(self, num_pages):
        """Whole least recently used leaves no request holds, until num_pages are free; a parent left without
        children joins the candidates."""
        evicted = 0
        while evicted < num_pages:
            leaves = [n for n in set(self.node_of.values()) if not n.children and not self.locked(n)]
            x = min(leaves, key=lambda n: n.last_access_time)
            del x.parent.children[self.child_key(x)]
            for p in x.value:
                del self.node_of[p]
                self.free.append(p)
            evicted += len(x.value)

    def settle(self):
        """A node requests hold the first pages of only (a rollback into it, a copy of its page) splits where their
        holding ends, as a lock moved to a node split there would: every node is held whole or not at all."""
        for node in list(set(self.node_of.values())):
            held = [self.refs[p] > 0 for p in node.value]
            if held[0] and not all(held):
                self.split(node, held.index(False))

    # The ops.
    def create(self, tokens, extra_key):
        req = Request(extra_key)
        req.pages = self.match_prefix(self.pages_of(tokens[:max(len(tokens) - 1, 0)]), extra_key)
        for p in req.pages:
            self.refs[p] += 1
        req.length = len(req.pages) * self.bs
        req.tokens = list(tokens[:req.length])
        self.hit_rows.add(req.length)
        self.settle()
        return self.requests.add(req)

    def fork(self, sid):
        parent = self.requests.get(sid)
        child = Request(parent.extra_key)
        child.pages, child.tokens, child.length = list(parent.pages), list(parent.tokens), parent.length
        for p in child.pages:
            self.refs[p] += 1
        return self.requests.add(child)

    def unref(self, pages):
        for p in pages:
            self.refs[p] -= 1
            if self.refs[p] == 0 and p not in self.node_of:
                self.free.append(p)

    def release(self, sid):
        req = self.requests.get(sid)
        full = req.length // self.bs
        self.insert(self.pages_of(req.tokens), req.pages[:full], req.extra_key)  # cache_finished_req: stamps its path
        self.unref(reversed(req.pages))
        del self.requests.live[sid]
        self.settle()

    def rollback(self, sid, count):
        req = self.requests.get(sid)
        req.length -= rollback_count(count, req.length)
        del req.tokens[req.length:]
        keep = -(-req.length // self.bs)
        self.unref(reversed(req.pages[keep:]))
        del req.pages[keep:]
        self.settle()

    def evictable_pages(self):
        return sum(1 for p, node in self.node_of.items() if self.refs[p] == 0)

    def append(self, sid, k, v, tokens):
        k, v = token_steps(k, v, tokens, self.d_k, self.d_v, lambda: self.requests.get(sid))
        req, n = self.requests.get(sid), k.shape[0]
        if n == 0:
            return
        last = req.pages[-1] if req.length % self.bs else None
        copy = last is not None and (self.refs[last] > 1 or last in self.node_of)  # shared, or the tree's
        need = int(copy) + max(0, -(-(req.length + n) // self.bs) - len(req.pages))
        if need > len(self.free) + self.evictable_pages():
            raise CapacityRefusal(f"{need} pages needed, {len(self.free)} free, {self.evictable_pages()} evictable")
        if need > len(self.free):
            self.evict(need - len(self.free))
        fresh = [self.free.pop() for _ in range(need)]
        for p in fresh:
            self.refs[p] = 1
        if copy:
            req.pages[-1] = fresh.pop(0)
            self.pool.copy(last, req.pages[-1])
            self.unref([last])
        req.pages += fresh
        self.pool.write(req.pages, req.length, k, v)
        req.length += n
        req.tokens += list(tokens)
        self.cache_unfinished(req)
        self.settle()

    def cache_unfinished(self, req):
        """The request's full pages inserted; those the tree had already replace its own, which are freed."""
        full = req.length // self.bs
        tree_pages = self.insert(self.pages_of(req.tokens), req.pages[:full], req.extra_key)
        for i, p in enumerate(tree_pages):
            if req.pages[i] != p:
                self.refs[p] += 1
                self.unref([req.pages[i]])
                req.pages[i] = p

    # What the harness observes (TableViews reads the rows through these).
    def table(self, sid):
        return self.requests.get(sid).pages

    def length(self, sid):
        return self.requests.get(sid).length

    def ref_counts(self):
        return {p: r for p, r in enumerate(self.refs) if r > 0}

    def free_blocks(self):
        return len(self.free)

    def evictable_blocks(self):
        return self.evictable_pages()
