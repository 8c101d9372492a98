"""Unit tests of kvconform_port.glue: the copy-on-write fork, the prefix kind's counters and undo on a refusal, alone
and together in a paged cache served through the library's Port."""
import collections
import copy
import json
import random
import unittest

import numpy as np

import kvconform_port as kp
from kvconform_port import codec
from engine_caches import sglang_prefix, vllm_prefix


class Engine:
    """A block allocator without fork, as vLLM v1's: a free list popped from its end, rows in numpy blocks."""

    def __init__(self, blocks, block_size=2, d=1):
        self.free_list = list(range(blocks - 1, -1, -1))
        self.rows = np.full((blocks, block_size, d), np.nan)
        self.calls = []

    def allocate(self):
        if not self.free_list:
            raise kp.CapacityRefusal("no free block")
        self.calls.append("allocate")
        return self.free_list.pop()

    def free(self, block):
        self.calls.append(("free", block))
        self.free_list.append(block)

    def copy(self, src, dst):
        self.calls.append(("copy", src, dst))
        self.rows[dst] = self.rows[src]


def cow_over(engine):
    return kp.CowBlocks(engine.allocate, engine.free, engine.copy)


def state(cow, engine):
    """Everything a refusal must leave as it was: the tables, every block's count, the engine's free list."""
    return ({s: cow.table(s) for s in cow.sequences()}, [cow.refcount(b) for b in range(len(engine.rows))],
            list(engine.free_list))


class CowBlocksTest(unittest.TestCase):
    def setUp(self):
        self.engine = Engine(4)
        self.cow = cow_over(self.engine)
        self.a = [self.engine.allocate(), self.engine.allocate()]
        self.cow.add("a", self.a)
        self.engine.calls.clear()

    def test_add_owns_each_block_once_and_extends_a_table(self):
        self.assertEqual((self.cow.table("a"), [self.cow.refcount(b) for b in self.a]), (self.a, [1, 1]))
        more = self.engine.allocate()
        self.cow.add("a", [more])
        self.cow.add("empty", [])
        self.assertEqual((self.cow.table("a"), self.cow.table("empty")), (self.a + [more], []))
        self.assertEqual(self.cow.sequences(), ["a", "empty"])
        self.assertEqual(self.cow.refcount(3), 0)  # never handed over: no table holds it

    def test_table_is_a_copy(self):
        self.cow.table("a").append(99)
        self.assertEqual(self.cow.table("a"), self.a)

    def test_fork_shares_every_block_and_calls_nothing(self):
        self.cow.fork("a", "b")
        self.assertEqual((self.cow.table("b"), [self.cow.refcount(b) for b in self.a]), (self.a, [2, 2]))
        self.assertEqual((self.engine.calls, self.engine.free_list), ([], [3, 2]))

    def test_writable_of_a_block_held_alone_is_itself(self):
        self.assertEqual(self.cow.writable("a", 1), self.a[1])
        self.assertEqual(self.engine.calls, [])

    def test_writable_of_a_shared_block_copies_it_into_the_writer_only(self):
        self.engine.rows[self.a[1]] = [[5.0], [6.0]]
        self.cow.fork("a", "b")
        new = self.cow.writable("b", 1)
        self.assertNotIn(new, self.a)
        self.assertEqual(self.engine.calls, ["allocate", ("copy", self.a[1], new)])
        self.assertEqual(self.engine.rows[new].ravel().tolist(), [5.0, 6.0])
        self.assertEqual((self.cow.table("a"), self.cow.table("b")), (self.a, [self.a[0], new]))
        self.assertEqual([self.cow.refcount(b) for b in (self.a[0], self.a[1], new)], [2, 1, 1])
        self.assertEqual(self.cow.writable("b", 1), new)  # now its own: no second copy
        self.assertEqual(self.cow.writable("a", 1), self.a[1])  # the sibling is left holding the old one alone

    def test_refused_allocation_changes_nothing(self):
        self.cow.fork("a", "b")
        self.cow.add("c", [self.engine.allocate(), self.engine.allocate()])  # the pool is now empty
        before = state(self.cow, self.engine)
        with self.assertRaises(kp.CapacityRefusal):
            self.cow.writable("b", 0)
        self.assertEqual(state(self.cow, self.engine), before)

    def test_failed_copy_gives_the_block_back(self):
        def broken(src, dst):
            raise MemoryError("device copy failed")
        cow = kp.CowBlocks(self.engine.allocate, self.engine.free, broken)
        cow.add("a", [0])
        cow.fork("a", "b")
        before = state(cow, self.engine)
        with self.assertRaises(MemoryError):
            cow.writable("b", 0)
        self.assertEqual(state(cow, self.engine), before)

    def test_an_engine_handing_out_a_held_block_is_a_bug(self):
        cow = kp.CowBlocks(lambda: 0, self.engine.free, self.engine.copy)
        cow.add("a", [0])
        cow.fork("a", "b")
        with self.assertRaises(RuntimeError):
            cow.writable("b", 0)

    def test_release_frees_what_no_other_table_holds_last_block_first(self):
        more = self.engine.allocate()
        self.cow.add("a", [more])
        self.cow.fork("a", "b")
        fresh = self.cow.writable("b", 2)
        self.engine.calls.clear()
        self.cow.release("b")
        self.assertEqual(self.engine.calls, [("free", fresh)])  # the shared ones stay with "a"
        self.assertEqual([self.cow.refcount(b) for b in self.a + [more]], [1, 1, 1])
        self.engine.calls.clear()
        self.cow.release("a")
        self.assertEqual(self.engine.calls, [("free", more), ("free", self.a[1]), ("free", self.a[0])])
        self.assertEqual((self.cow.sequences(), sorted(self.engine.free_list)), ([], [0, 1, 2, 3]))
        self.assertEqual([self.cow.refcount(b) for b in range(4)], [0, 0, 0, 0])

    def test_misuse_is_refused_and_changes_nothing(self):
        self.cow.fork("a", "b")
        before = state(self.cow, self.engine)
        misuses = [
            (kp.IndexRefusal, lambda: self.cow.table("nobody")),
            (kp.IndexRefusal, lambda: self.cow.table(None)),
            (kp.IndexRefusal, lambda: self.cow.table([1])),  # unhashable: names no sequence either
            (kp.IndexRefusal, lambda: self.cow.fork("nobody", "c")),
            (kp.IndexRefusal, lambda: self.cow.fork("a", "b")),  # b exists
            (kp.IndexRefusal, lambda: self.cow.fork("a", [2])),
            (kp.IndexRefusal, lambda: self.cow.writable("nobody", 0)),
            (kp.IndexRefusal, lambda: self.cow.writable("b", 2)),
            (kp.IndexRefusal, lambda: self.cow.writable("b", -1)),  # no wrapping to the end
            (kp.IndexRefusal, lambda: self.cow.writable("b", 1.0)),
            (kp.IndexRefusal, lambda: self.cow.writable("b", True)),
            (kp.IndexRefusal, lambda: self.cow.release("nobody")),
            (kp.IndexRefusal, lambda: self.cow.add("c", [self.a[0]])),  # held by a and b already
            (kp.IndexRefusal, lambda: self.cow.add("c", [3, 3])),  # listed twice
            (kp.IndexRefusal, lambda: self.cow.add("a", [3, self.a[1]])),  # one good block does not go in alone
            (kp.IndexRefusal, lambda: self.cow.add([1], [3])),
        ]
        for refusal, misuse in misuses:
            with self.assertRaises(refusal):
                misuse()
            self.assertEqual(state(self.cow, self.engine), before)
            self.assertEqual(self.engine.calls, [])
        self.cow.release("b")
        with self.assertRaises(kp.IndexRefusal):  # released: gone for good
            self.cow.writable("b", 0)

    def test_writable_accepts_numpy_indices(self):
        self.cow.fork("a", "b")
        self.assertNotEqual(self.cow.writable("b", np.int64(0)), self.a[0])

    def test_random_ops_keep_the_accounts(self):
        """After every op: each count is the number of tables holding the block, held and free blocks make the
        pool, and no table shares a block with one that wrote into it after a fork."""
        rng = random.Random(5)
        engine = Engine(8)
        cow = cow_over(engine)
        next_id = 0
        for _ in range(2000):
            live = cow.sequences()
            op = rng.choice(["add", "fork", "write", "release"] if live else ["add"])
            try:
                if op == "add":
                    cow.add(rng.choice(live + [next_id]), [engine.allocate()])
                    next_id += 1
                elif op == "fork":
                    cow.fork(rng.choice(live), next_id)
                    next_id += 1
                elif op == "write":
                    seq = rng.choice(live)
                    if cow.table(seq):
                        j = rng.randrange(len(cow.table(seq)))
                        block = cow.writable(seq, j)
                        self.assertEqual((cow.refcount(block), cow.table(seq)[j]), (1, block))
                else:
                    cow.release(rng.choice(live))
            except kp.CapacityRefusal:
                pass
            held = collections.Counter(b for s in cow.sequences() for b in cow.table(s))
            self.assertEqual({b: cow.refcount(b) for b in range(8) if cow.refcount(b)}, dict(held))
            self.assertEqual(sorted(list(held) + engine.free_list), list(range(8)))


class CountersTest(unittest.TestCase):
    def test_free_and_evictable_splits_one_queue(self):
        cached = {2, 5}
        queue = collections.OrderedDict((b, None) for b in (4, 2, 7, 5, 1))
        self.assertEqual(kp.free_and_evictable(queue, cached.__contains__), (3, 2))
        self.assertEqual(kp.free_and_evictable([], cached.__contains__), (0, 0))
        self.assertEqual(kp.free_and_evictable(iter([2, 5]), cached.__contains__), (0, 2))
        free, evictable = kp.free_and_evictable(np.array([2, 3]), lambda b: b == 2)
        self.assertEqual((type(free), type(evictable), free, evictable), (int, int, 1, 1))

    def test_hit_rows_counts_and_resets(self):
        hits = kp.HitRows()
        self.assertEqual((hits.total, hits()), (0, 0))
        for rows in (4, 0, np.int64(8)):
            hits.add(rows)
        self.assertEqual((hits.total, hits(), type(hits())), (12, 12, int))
        self.assertEqual(json.dumps({"hit_rows": hits()}), '{"hit_rows": 12}')
        hits.reset()
        self.assertEqual(hits(), 0)

    def test_hit_rows_refuses_what_no_hit_is_and_keeps_its_count(self):
        hits = kp.HitRows()
        hits.add(3)
        for bad in (-1, 1.5, 2.0, True, "4", None):
            with self.assertRaises(ValueError):
                hits.add(bad)
        self.assertEqual(hits.total, 3)
        with self.assertRaises(AttributeError):
            hits.total = 7

    def test_hit_rows_serves_the_prefix_kinds_observation_as_is(self):
        class Counted(kp.PrefixAdapter):
            def __init__(self, config):
                super().__init__(config)
                self.hit_rows = kp.HitRows()

            def free_blocks(self):
                return 1

            def evictable_blocks(self):
                return 2

        c = Counted({})
        c.hit_rows.add(5)
        self.assertEqual(c.observed_counters(), {"free_blocks": 1, "evictable_blocks": 2, "hit_rows": 5})

    def test_engine_caches_report_their_counters(self):
        """vLLM's queue: a released registered block is evictable, the rest free; both caches count a hit's rows."""
        config = {"capacity": 4, "block_size": 2, "d_k": 1, "d_v": 1, "k_scale": 1.0, "v_scale": 1.0}
        for cls, args in ((vllm_prefix.VllmPrefixCache, (0,)), (sglang_prefix.SglangPrefixCache, (0,))):
            c = cls(config)
            s = c.create([1, 2, 3], *args)
            c.append(s, np.array([[1.0], [2.0], [3.0]]), np.array([[1.0], [2.0], [3.0]]), [1, 2, 3])
            c.release(s)
            self.assertEqual((c.free_blocks(), c.evictable_blocks(), c.hit_rows()), (3, 1, 0), cls.__name__)
            c.create([1, 2, 3], *args)
            self.assertEqual((c.free_blocks(), c.evictable_blocks(), c.observed_counters()["hit_rows"]), (3, 0, 2))


class Request:
    def __init__(self):
        self.tokens, self.blocks = [], []


class Scheduler:
    """An engine that records a request's tokens before it allocates their blocks, as schedulers do."""

    def __init__(self, blocks):
        self.free, self.request, self.pool = list(range(blocks)), Request(), np.arange(4.0)
        self.shared = self.request.tokens  # an alias the restore must keep

    def append(self, tokens, need):
        self.request.tokens += tokens
        if need > len(self.free):
            raise kp.CapacityRefusal("no blocks")
        self.request.blocks += [self.free.pop() for _ in range(need)]


class UndoOnRefusalTest(unittest.TestCase):
    def test_a_refusal_restores_every_object_and_propagates(self):
        engine, log = Scheduler(2), Request()
        engine.append([1], 1)
        before = copy.deepcopy((vars(engine), vars(engine.request), vars(log)))
        refusal = kp.CapacityRefusal("no blocks")
        with self.assertRaises(kp.CapacityRefusal) as caught:
            with kp.undo_on_refusal(engine, log):
                log.tokens.append(9)
                engine.added = True
                engine.append([2, 3], 1)  # allowed: takes the last block
                engine.pool[0] = -1.0
                engine.append([4], 5)  # refused after its tokens went in
        self.assertIs(type(caught.exception), type(refusal))
        self.assertEqual(engine.request.tokens, [1])
        self.assertEqual(engine.request.blocks, before[1]["blocks"])
        self.assertEqual((engine.free, log.tokens, hasattr(engine, "added")), ([0], [], False))
        self.assertEqual(engine.pool.tolist(), [0.0, 1.0, 2.0, 3.0])
        self.assertIs(engine.shared, engine.request.tokens)  # what they shared is shared again

    def test_references_between_the_objects_stay_the_objects(self):
        engine = Scheduler(1)
        adapter = type("Adapter", (), {})()
        adapter.engine, adapter.appended = engine, 0
        with self.assertRaises(kp.CapacityRefusal):
            with kp.undo_on_refusal(adapter, engine):
                adapter.appended += 1
                engine.append([1], 2)
        self.assertIs(adapter.engine, engine)
        self.assertEqual((adapter.appended, engine.request.tokens), (0, []))

    def test_every_refusal_and_the_listed_exceptions_restore(self):
        class CacheFull(Exception):
            pass

        for error, refusals in ((kp.ShapeRefusal("k"), ()), (kp.IndexRefusal("s"), ()), (kp.Refusal("bare"), ()),
                                (CacheFull(), (CacheFull,)), (CacheFull(), {CacheFull: "capacity"}),
                                (KeyError("k"), [LookupError])):
            engine = Scheduler(1)
            with self.assertRaises(type(error)):
                with kp.undo_on_refusal(engine, refusals=refusals):
                    engine.request.tokens.append(1)
                    raise error
            self.assertEqual(engine.request.tokens, [], error)

    def test_success_and_bugs_keep_the_changes(self):
        engine = Scheduler(1)
        with kp.undo_on_refusal(engine):
            engine.append([1], 1)
        self.assertEqual((engine.request.tokens, engine.free), ([1], []))
        for bug in (ValueError("bug"), kp.Unsupported("no"), KeyError("x")):
            with self.assertRaises(type(bug)):
                with kp.undo_on_refusal(engine, refusals=(ZeroDivisionError,)):
                    engine.request.tokens.append(2)
                    raise bug
        self.assertEqual(engine.request.tokens, [1, 2, 2, 2])

    def test_attrs_restores_only_the_named_attributes(self):
        engine = Scheduler(1)
        pool = engine.pool
        with self.assertRaises(kp.CapacityRefusal):
            with kp.undo_on_refusal(engine, attrs=("request", "free", "extra")):
                engine.append([1], 1)
                engine.pool = np.zeros(1)
                engine.extra = "added in the block"
                raise kp.CapacityRefusal("late")
        self.assertEqual((engine.request.tokens, engine.free, hasattr(engine, "extra")), ([], [0], False))
        self.assertEqual(engine.pool.tolist(), [0.0])  # not named: left as the block made it
        self.assertIsNot(engine.pool, pool)
        with self.assertRaises(kp.CapacityRefusal):
            with kp.undo_on_refusal(engine, attrs="free"):  # a single name
                engine.free.append(7)
                raise kp.CapacityRefusal("x")
        self.assertEqual(engine.free, [0])

    def test_an_object_without_a_dict_needs_attrs(self):
        with self.assertRaises(TypeError):
            with kp.undo_on_refusal((1, 2)):
                pass

    def test_a_cow_snapshot_still_calls_the_engine(self):
        engine = Engine(3)
        cow = cow_over(engine)
        cow.add("a", [engine.allocate()])
        cow.fork("a", "b")
        with self.assertRaises(kp.CapacityRefusal):
            with kp.undo_on_refusal(cow, engine, attrs=("_tables", "_refs", "free_list")):
                cow.writable("b", 0)
                raise kp.CapacityRefusal("the rest did not fit")
        self.assertEqual((cow.table("b"), cow.refcount(0), sorted(engine.free_list)), ([0], 2, [1, 2]))
        cow.writable("b", 0)  # the restored tables still allocate from this engine, not a copy of it
        self.assertEqual(sorted(engine.free_list), [2])
        with self.assertRaises(kp.CapacityRefusal):
            with kp.undo_on_refusal(cow):  # its whole state, callbacks included
                cow.fork("a", "c")
                raise kp.CapacityRefusal("x")
        self.assertEqual(cow.sequences(), ["a", "b"])
        cow.release("a")
        self.assertEqual(sorted(engine.free_list), [0, 2])


class GluePaged(kp.PagedAdapter):
    """A paged cache over an engine without fork, made of the glue alone: CowBlocks for fork and copy-on-write,
    undo_on_refusal for an append whose later allocation fails after an earlier one succeeded."""

    def __init__(self, config):
        super().__init__(config)
        self.bs, self.d_k, self.d_v = config["block_size"], config["d_k"], config["d_v"]
        self.engine = Engine(config["capacity"], self.bs, self.d_k + self.d_v)
        self.blocks = cow_over(self.engine)
        self.lengths, self.next_id = {}, 0

    def create(self):
        self.blocks.add(self.next_id, [])
        self.lengths[self.next_id] = 0
        self.next_id += 1
        return self.next_id - 1

    def fork(self, sid):
        self.blocks.fork(sid, self.next_id)
        self.lengths[self.next_id] = self.lengths[sid]
        self.next_id += 1
        return self.next_id - 1

    def release(self, sid):
        self.blocks.release(sid)
        del self.lengths[sid]

    def append(self, sid, k, v):
        table = self.blocks.table(sid)
        k, v = np.atleast_2d(k), np.atleast_2d(v)
        if k.ndim != 2 or v.ndim != 2 or k.shape[1] != self.d_k or v.shape[1] != self.d_v or len(k) != len(v):
            raise kp.ShapeRefusal(f"k {k.shape}, v {v.shape}")
        start, n = self.lengths[sid], len(k)
        if n == 0:  # the contract: no copy, no block
            return
        with kp.undo_on_refusal(self.blocks, self.engine, attrs=("_tables", "_refs", "free_list")):
            for j in range(start // self.bs, -(-(start + n) // self.bs)):
                if j < len(table):
                    self.blocks.writable(sid, j)
                else:
                    self.blocks.add(sid, [self.engine.allocate()])
        table = self.blocks.table(sid)
        for i, row in enumerate(np.hstack([k, v]), start):
            self.engine.rows[table[i // self.bs], i % self.bs] = row
        self.lengths[sid] += n

    def rows(self, sid):
        rows = self.engine.rows[self.blocks.table(sid)].reshape(-1, self.d_k + self.d_v)[:self.lengths[sid]]
        return rows[:, :self.d_k], rows[:, self.d_k:]

    def keys(self, sid):
        return self.rows(sid)[0]

    def values(self, sid):
        return self.rows(sid)[1]

    def block_table(self, sid):
        return self.blocks.table(sid)

    def ref_counts(self):
        return {b: self.blocks.refcount(b) for s in self.blocks.sequences() for b in self.blocks.table(s)}

    def free_blocks(self):
        return len(self.engine.free_list)

    def bytes_in_use(self):
        return len(self.ref_counts()) * self.bs * (self.d_k + self.d_v) * 8


class GluePagedPortTest(unittest.TestCase):
    def setUp(self):
        self.ids = iter(range(1, 1000))
        self.port = kp.Port("glue", [GluePaged])
        self.ask("open", cache=1, config={"kind": "paged", "capacity": 4, "block_size": 2, "d_k": 1, "d_v": 1})

    def ask(self, op, ok=True, **fields):
        answer = self.port.handle(dict(fields, id=next(self.ids), op=op, **({} if op == "open" else {"cache": 1})))
        self.assertEqual(answer["ok"], ok, answer)
        return answer

    def observe(self):
        return {field: value for field, value in self.ask("observe").items() if field != "id"}

    def append(self, seq, *rows, ok=True):
        return self.ask("append", ok, seq=seq, k=codec.tensor([[r] for r in rows]),
                        v=codec.tensor([[-r] for r in rows]))

    def test_fork_copy_on_write_and_a_refusal_that_leaves_the_pool(self):
        self.ask("create")
        self.append(0, 1.0, 2.0, 3.0)
        self.ask("fork", seq=0)
        shared = self.observe()
        self.assertEqual(shared["block_refs"], [[0, 2], [1, 2]])
        self.assertEqual(shared["counters"], {"free_blocks": 2, "bytes_in_use": 64})
        self.ask("append", seq=1, k=codec.tensor(np.zeros((0, 1))), v=codec.tensor(np.zeros((0, 1))))
        self.assertEqual(self.observe(), shared)  # 0 steps: no copy, no block
        # 5 rows into seq 1: a copy of its shared half block and two new blocks, one more than the pool has; the copy
        # and the first new block were taken before the refusal, and are given back
        self.assertEqual(self.append(1, 4.0, 5.0, 6.0, 7.0, 8.0, ok=False)["error"], "capacity")
        self.assertEqual(self.observe(), shared)
        self.append(1, 4.0)
        after = self.observe()
        self.assertEqual([s["blocks"] for s in after["streams"]], [[0, 1], [0, 2]])
        self.assertEqual([s["keys"]["data"] for s in after["streams"]], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
        self.assertEqual(after["block_refs"], [[0, 2], [1, 1], [2, 1]])
        self.ask("release", seq=0)
        self.ask("release", seq=1)
        self.assertEqual(self.observe()["counters"]["free_blocks"], 4)
        self.assertEqual(self.ask("append", False, seq=1, k=codec.tensor([1.0]), v=codec.tensor([1.0]))["error"],
                         "index")


if __name__ == "__main__":
    unittest.main()
