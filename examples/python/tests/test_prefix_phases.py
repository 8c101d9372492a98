"""Unit tests of the numpy prefix cache's scheduler phases (docs/kinds/prefix.md "Phases") under its block eviction,
and of the library's phase ops for the prefix kind."""
import unittest

import numpy as np

import kvconform_port as kp
from numpy_caches import prefix

CONFIG = {"capacity": 4, "block_size": 2, "d_k": 1, "d_v": 1, "k_scale": 1.0, "v_scale": 1.0}


def cache(cls=prefix.PrefixCache, **config):
    return cls(dict(CONFIG, **config))


def rows(*values):
    """k and v of one step per value: keys the values, values their negatives."""
    k = np.array(values, dtype=float).reshape(-1, 1)
    return k, -k


def counts(c):
    return c.observed_counters()


class PrefixPhasesTest(unittest.TestCase):
    def test_phases_worked_example(self):
        c = cache()
        a = c.lookup([1, 2, 3, 4, 5])
        self.assertEqual((c.keys(a).shape, c.block_table(a)), ((0, 1), []))  # waiting: no rows, no blocks
        c.admit(a, 3)  # two blocks for rows to come, nothing registered yet
        self.assertEqual((len(c.block_table(a)), c.keys(a).shape), (2, (0, 1)))
        self.assertEqual(counts(c), {"free_blocks": 2, "evictable_blocks": 0, "hit_rows": 0})
        c.append(a, *rows(1.0, 2.0), [1, 2])  # block 0 written, then registered
        b = c.lookup([1, 2, 3])
        self.assertEqual((c.hit_rows(), c.ref_counts()[c.block_table(a)[0]]), (0, 1))  # a lookup holds nothing
        c.admit(b, 1)
        self.assertEqual((c.block_table(b)[0], c.keys(b).ravel().tolist()), (c.block_table(a)[0], [1.0, 2.0]))
        self.assertEqual(counts(c), {"free_blocks": 1, "evictable_blocks": 0, "hit_rows": 2})

    def test_an_admit_matches_its_prompt_again(self):
        c = cache(capacity=2, block_size=1)
        s = c.create([7])
        c.append(s, *rows(1.0), [7])
        c.release(s)  # the block of [7] stays cached, evictable
        w = c.lookup([7, 8])  # finds it, holds nothing
        c.admit(c.lookup([9]), 2)  # the pool runs dry: the least recently released block, [7]'s, is evicted
        c.admit(w, 0)
        self.assertEqual((c.hit_rows(), len(c.keys(w))), (0, 0))

    def test_a_block_is_found_only_once_written(self):
        c = cache()
        a = c.lookup([1, 2, 3])
        c.admit(a, 3)
        self.assertEqual(len(c.keys(c.create([1, 2, 3]))), 0)  # a's block for [1, 2] holds no row yet
        c.append(a, *rows(1.0), [1])
        self.assertEqual(len(c.keys(c.create([1, 2, 3]))), 0)  # nor a full one
        c.append(a, *rows(2.0), [2])
        self.assertEqual(c.keys(c.create([1, 2, 3])).ravel().tolist(), [1.0, 2.0])

    def test_retract_and_abort_let_go_without_the_insert(self):
        c = cache()
        a = c.lookup([1, 2, 3, 4, 5])
        c.admit(a, 5)
        c.append(a, *rows(1.0, 2.0, 9.0), [1, 2, 9])
        c.retract(a)  # the registered block of [1, 2] stays cached; a's other blocks go free
        self.assertEqual((c.block_table(a), c.keys(a).shape, c.seqs.live[a].prompt), ([], (0, 1), [1, 2, 9, 4, 5]))
        self.assertEqual(counts(c), {"free_blocks": 3, "evictable_blocks": 1, "hit_rows": 0})
        for op, args in ((c.append, (a, *rows(3.0), [3])), (c.decode, (a, np.ones(1))), (c.fork, (a,)),
                         (c.rollback, (a, 0)), (c.retract, (a,)), (c.prefill, (a, *rows(3.0), [3], np.ones((1, 1))))):
            with self.assertRaises(kp.IndexRefusal):
                op(*args)
        c.admit(a, 3)  # its own chunk, found again
        self.assertEqual((c.keys(a).ravel().tolist(), counts(c)), ([1.0, 2.0], {"free_blocks": 1,
                                                                               "evictable_blocks": 0, "hit_rows": 2}))
        c.abort(a)
        c.abort(c.lookup([5]))  # a waiting one too
        self.assertEqual(counts(c), {"free_blocks": 3, "evictable_blocks": 1, "hit_rows": 2})
        with self.assertRaises(kp.IndexRefusal):
            c.abort(a)

    def test_refused_admits_change_nothing(self):
        c = cache()
        s = c.create([])
        c.append(s, *rows(1.0, 2.0), [1, 2])
        c.release(s)  # 3 free blocks and 1 evictable, which a hit on [1, 2] revives
        w = c.lookup([1, 2, 3])
        before = counts(c)
        for count, refusal in ((8, kp.CapacityRefusal), (-1, kp.IndexRefusal)):
            with self.assertRaises(refusal):
                c.admit(w, count)
            self.assertEqual((counts(c), c.seqs.live[w].waiting), (before, True))
        c.admit(w, 6)  # the hit's block is not among those the admit may evict
        self.assertEqual(counts(c), {"free_blocks": 0, "evictable_blocks": 0, "hit_rows": 2})
        with self.assertRaises(kp.IndexRefusal):
            c.admit(w, 0)  # running

    def test_blocks_for_rows_to_come_are_not_shared(self):
        c = cache()
        a = c.lookup([])
        c.admit(a, 4)
        c.append(a, *rows(1.0), [1])
        f = c.fork(a)  # shares the block holding a row, not the one for rows to come
        self.assertEqual(c.block_table(f), c.block_table(a)[:1])
        c.append(a, *rows(2.0), [2])  # the shared, partly filled block is copied first
        self.assertNotEqual(c.block_table(a)[0], c.block_table(f)[0])
        self.assertEqual((c.keys(a).ravel().tolist(), c.keys(f).ravel().tolist()), ([1.0, 2.0], [1.0]))
        c.rollback(a, 0)  # the block a's admit took past its rows goes
        self.assertEqual((len(c.block_table(a)), c.free_blocks()), (1, 2))

    def test_a_lookup_keeps_to_its_extra_key(self):
        for cls, hit in ((prefix.PrefixCache, 0), (prefix.IgnoresExtraKeyPrefix, 2)):
            c = cache(cls)
            s = c.create([], 3)
            c.append(s, *rows(1.0, 2.0), [1, 2])
            other, own = c.lookup([1, 2, 3], 5), c.lookup([1, 2, 3], 3)
            c.admit(other, 0)
            c.admit(own, 0)
            self.assertEqual((len(c.keys(other)), len(c.keys(own))), (hit, 2), cls)


class PrefixPhasesPortTest(unittest.TestCase):
    def test_lookups_name_handles_and_aborts_end_them(self):
        port, ids = kp.Port("p", [prefix.PrefixCache]), iter(range(1, 100))

        def ask(op, **fields):
            return port.handle(dict(fields, id=next(ids), op=op, cache=1))

        kinds = port.handle({"id": 0, "op": "hello", "protocol": 2})["kinds"]
        self.assertEqual(kinds["prefix"]["capabilities"], ["decode", "prefill", "rollback", "extra_keys", "phases"])
        ask("open", config={"kind": "prefix", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1})
        row = {"shape": [1], "data": [1.0]}
        self.assertTrue(ask("create", tokens=[], extra_key=2)["ok"])  # handle 0
        self.assertTrue(ask("append", seq=0, k=row, v=row, tokens=[4])["ok"])
        self.assertTrue(ask("lookup", tokens=[4, 5], extra_key=2)["ok"])  # handle 1, waiting
        self.assertEqual(ask("append", seq=1, k=row, v=row, tokens=[5])["error"], "index")
        self.assertTrue(ask("admit", seq=1, count=1)["ok"])  # the key's hit, and a block for the row to come
        self.assertEqual(ask("admit", seq=0, count=1)["error"], "index")
        seen = ask("observe")
        self.assertEqual([len(s["blocks"]) for s in seen["streams"]], [1, 2])
        self.assertEqual(seen["counters"], {"free_blocks": 0, "evictable_blocks": 0, "hit_rows": 1})
        self.assertTrue(ask("abort", seq=1)["ok"])
        self.assertEqual(ask("abort", seq=1)["error"], "index")
        self.assertTrue(ask("retract", seq=0)["ok"])
        self.assertEqual([s["name"] for s in ask("observe")["streams"]], ["seq 0"])

    def test_phases_are_declared_only_by_a_cache_with_all_four(self):
        from engine_caches.vllm_prefix import VllmPrefixCache
        self.assertNotIn("phases", VllmPrefixCache.capabilities())
        self.assertNotIn("phases", type("NoAbort", (prefix.PrefixCache,), {"abort": None}).capabilities())
        port = kp.Port("p", [VllmPrefixCache])
        port.handle({"id": 1, "op": "open", "cache": 1,
                     "config": {"kind": "prefix", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1}})
        self.assertEqual(port.handle({"id": 2, "op": "lookup", "cache": 1, "tokens": [1]})["error"], "unsupported")


if __name__ == "__main__":
    unittest.main()
