"""Unit tests of the numpy radix cache on docs/kinds/radix.md's rules, of the bugs its twins seed, and of the library's
radix ops."""
import unittest

import numpy as np

import kvconform_port as kp
from numpy_caches import radix

from .test_prefix_phases import CONFIG, counts, rows  # the phases' worked example is there, on the same pool


def cache(cls=radix.RadixCache, **config):
    return cls(dict(CONFIG, **config))


class RadixCacheTest(unittest.TestCase):
    def test_an_admit_matches_its_prompt_again(self):
        for cls, hit in ((radix.RadixCache, 0), (radix.AdmitStaleHitRadix, 1)):
            c = cache(cls, capacity=2, block_size=1)
            s = c.create([7])
            c.append(s, *rows(1.0), [7])
            c.release(s)  # the page of [7] stays cached, evictable
            w = c.lookup([7, 8])  # finds it, holds nothing
            c.admit(c.lookup([9]), 2)  # the pool runs dry: the page of [7] is evicted
            c.admit(w, 0)
            self.assertEqual((c.hit_rows(), len(c.keys(w))), (hit, hit), cls)  # the twin holds a page it lost

    def test_a_page_is_found_only_once_written(self):
        for cls, found in ((radix.RadixCache, (0, 0)), (radix.RegistersBeforeWriteRadix, (2, 1))):
            c = cache(cls)
            a = c.lookup([1, 2, 3])
            c.admit(a, 3)
            c.create([1, 2, 3])  # the twin hits the page a admitted for [1, 2], which holds no row yet
            self.assertEqual((c.hit_rows(), c.protected_blocks()), found, cls)
        c = cache()
        a = c.lookup([1, 2, 3])
        c.admit(a, 3)
        c.append(a, *rows(1.0, 2.0), [1, 2])
        self.assertEqual(c.keys(c.create([1, 2, 3])).ravel().tolist(), [1.0, 2.0])

    def test_retract_and_abort_let_go_without_the_insert(self):
        c = cache()
        a = c.lookup([1, 2, 3, 4, 5])
        c.admit(a, 5)
        c.append(a, *rows(1.0, 2.0, 9.0), [1, 2, 9])
        c.retract(a)  # the tree keeps its page of [1, 2]; a's own pages go free
        self.assertEqual((c.block_table(a), c.keys(a).shape, c.seqs.live[a].prompt), ([], (0, 1), [1, 2, 9, 4, 5]))
        self.assertEqual(counts(c), {"free_blocks": 3, "evictable_blocks": 1, "hit_rows": 0, "protected_blocks": 0})
        for op, args in ((c.append, (a, *rows(3.0), [3])), (c.decode, (a, np.ones(1))), (c.fork, (a,)),
                         (c.rollback, (a, 0)), (c.retract, (a,)), (c.prefill, (a, *rows(3.0), [3], np.ones((1, 1))))):
            with self.assertRaises(kp.IndexRefusal):
                op(*args)
        c.admit(a, 3)  # its own chunk, found again
        self.assertEqual((c.keys(a).ravel().tolist(), c.hit_rows(), c.protected_blocks()), ([1.0, 2.0], 2, 1))
        c.abort(a)
        c.abort(c.lookup([5]))  # a waiting one too
        self.assertEqual(counts(c), {"free_blocks": 3, "evictable_blocks": 1, "hit_rows": 2, "protected_blocks": 0})
        with self.assertRaises(kp.IndexRefusal):
            c.abort(a)

    def test_whole_least_recently_used_leaves_go_and_locked_ones_stay(self):
        c = cache(block_size=1)
        x = c.create([])
        c.append(x, *rows(1.0, 2.0), [1, 2])  # one run of two pages
        c.release(x)
        y = c.create([])
        c.append(y, *rows(3.0), [3])
        c.release(y)  # used after [1, 2]
        z = c.create([])
        c.append(z, *rows(9.0, 9.0), [9, 9])  # one page short: the run of [1, 2] goes whole
        self.assertEqual((c.free_blocks(), c.evictable_blocks()), (1, 1))
        self.assertEqual((len(c.keys(c.create([1, 2]))), len(c.keys(c.create([3])))), (0, 1))
        with self.assertRaises(kp.CapacityRefusal):  # [3] is locked now: one free page is all there is
            c.append(z, *rows(9.0, 9.0), [9, 9])
        self.assertEqual((c.free_blocks(), c.evictable_blocks(), c.protected_blocks()), (1, 0, 3))

    def test_a_duplicate_page_is_replaced_by_the_trees(self):
        for cls in (radix.RadixCache, radix.DuplicateFreedUnmappedRadix):
            c = cache(cls, block_size=1)
            a, b = c.create([]), c.create([])
            c.append(a, *rows(1.0), [5])
            c.append(b, *rows(2.0), [5])  # fills under the chain a's page holds
            same = c.block_table(b) == c.block_table(a)
            self.assertEqual((same, c.block_table(b)[0] in c.free), (True, False) if cls is radix.RadixCache
                             else (False, True), cls)  # the twin's table points at a free page
            self.assertEqual(c.ref_counts(), {c.block_table(a)[0]: 2})
        self.assertEqual(c.keys(a).tolist(), [[1.0]])

    def test_a_lock_holds_the_whole_hit(self):
        for cls, refs in ((radix.RadixCache, [2, 2]), (radix.LockSkipsMatchedNodeRadix, [2, 1])):
            c = cache(cls, block_size=1)
            a = c.create([])
            c.append(a, *rows(1.0, 2.0), [1, 2])
            w = c.lookup([1, 2, 3])
            c.admit(w, 0)
            self.assertEqual([c.ref_counts().get(p, 0) for p in c.block_table(w)], refs, cls)

    def test_refused_admits_change_nothing(self):
        c = cache()
        s = c.create([])
        c.append(s, *rows(1.0, 2.0), [1, 2])
        c.release(s)  # 3 free pages and 1 evictable, which a hit on [1, 2] revives
        w = c.lookup([1, 2, 3])
        before = counts(c)
        for count, refusal in ((8, kp.CapacityRefusal), (-1, kp.IndexRefusal)):
            with self.assertRaises(refusal):
                c.admit(w, count)
            self.assertEqual((counts(c), c.seqs.live[w].waiting), (before, True))
        c.admit(w, 6)  # the hit's page is not among those the admit may evict
        self.assertEqual(counts(c), {"free_blocks": 0, "evictable_blocks": 0, "hit_rows": 2, "protected_blocks": 1})
        with self.assertRaises(kp.IndexRefusal):
            c.admit(w, 0)  # running


class RadixPortTest(unittest.TestCase):
    def test_lookups_name_handles_and_aborts_end_them(self):
        port, ids = kp.Port("p", [radix.RadixCache]), iter(range(1, 100))

        def ask(op, **fields):
            return port.handle(dict(fields, id=next(ids), op=op, cache=1))

        kinds = port.handle({"id": 0, "op": "hello", "protocol": 2})["kinds"]
        self.assertEqual(kinds, {"radix": {"capabilities": ["decode", "prefill", "rollback"]}})  # no extra keys
        ask("open", config={"kind": "radix", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1})
        self.assertTrue(ask("lookup", tokens=[4, 5])["ok"])  # handle 0, waiting
        self.assertTrue(ask("create", tokens=[])["ok"])  # handle 1
        self.assertEqual(ask("append", seq=0, k={"shape": [1], "data": [1.0]}, v={"shape": [1], "data": [2.0]},
                             tokens=[4])["error"], "index")
        self.assertTrue(ask("admit", seq=0, count=1)["ok"])
        self.assertEqual(ask("admit", seq=1, count=1)["error"], "index")
        seen = ask("observe")
        self.assertEqual([s["name"] for s in seen["streams"]], ["seq 0", "seq 1"])
        self.assertEqual(seen["counters"], {"free_blocks": 1, "evictable_blocks": 0, "hit_rows": 0,
                                            "protected_blocks": 0})
        self.assertTrue(ask("abort", seq=0)["ok"])
        self.assertEqual(ask("abort", seq=0)["error"], "index")
        self.assertTrue(ask("retract", seq=1)["ok"])
        self.assertEqual([s["name"] for s in ask("observe")["streams"]], ["seq 1"])


if __name__ == "__main__":
    unittest.main()
