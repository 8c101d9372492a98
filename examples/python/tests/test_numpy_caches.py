"""Unit tests of the numpy caches on the contracts' worked examples (docs/kinds/), where the harness's
version 1 cannot reach them (sinks, preemption) and on their twins' bugs."""
import unittest

import numpy as np

import kvconform_port as kp
from numpy_caches import beam, flat, fp16, growing, hybrid, latent, paged, prefix, ring


def rows(*values):
    return np.array(values, dtype=np.float64).reshape(len(values), 1)


class RowsKindsTest(unittest.TestCase):
    def test_flat_worked_example(self):
        c = flat.FlatCache({"capacity": 4, "d_k": 2, "d_v": 2})
        c.append(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]))
        c.append(np.array([1.0, 1.0]), np.array([5.0, 6.0]))
        output, weights = c.decode(np.array([1.0, 0.0]))
        np.testing.assert_allclose(output, [3.0, 4.0])
        np.testing.assert_allclose(weights, [0.40111209, 0.19777581, 0.40111209], atol=1e-8)
        with self.assertRaises(kp.CapacityRefusal):
            c.append(np.zeros((2, 2)), np.zeros((2, 2)))
        self.assertEqual(c.size(), 3)
        strict = flat.StrictCapacityFlat({"capacity": 1, "d_k": 1, "d_v": 1})
        with self.assertRaises(kp.CapacityRefusal):
            strict.append(rows(1.0), rows(1.0))

    def test_fp16_overflow_stores_inf_and_its_key_takes_weight_zero(self):
        """docs/numerics.md §4.5: a key of -100000 stores as -inf, scores -inf and takes weight exactly 0."""
        for cls in (fp16.Fp16Flat, fp16.Fp16Growing):
            c = cls({"capacity": 4, "step": 2, "d_k": 1, "d_v": 1})
            c.append(rows(-100000.0, 1.0), rows(5.0, 2.0))
            self.assertEqual(c.keys().ravel().tolist(), [-np.inf, 1.0])
            output, weights = c.decode(np.array([1.0]))
            self.assertEqual((output.tolist(), weights.tolist()), ([2.0], [0.0, 1.0]))
        zeros = fp16.ZerosForInfinitiesFp16({"capacity": 2, "d_k": 1, "d_v": 1})
        zeros.append(rows(-100000.0, 1.0), rows(5.0, 2.0))
        self.assertEqual(zeros.decode(np.array([1.0]))[0].tolist(), [0.0])

    def test_ring_sinks_survive_bulk_and_single_appends(self):
        for twin, want in ((False, [1.0, 4.0, 5.0]), (True, None)):
            cls = ring.BulkEvictsSinksRing if twin else ring.RingCache
            bulk, single = cls({"capacity": 3, "keep": 1, "d_k": 1, "d_v": 1}), cls({"capacity": 3, "keep": 1, "d_k": 1,
                                                                                      "d_v": 1})
            bulk.append(rows(1, 2, 3, 4, 5), rows(1, 2, 3, 4, 5))
            for x in (1, 2, 3, 4, 5):
                single.append(np.array([float(x)]), np.array([float(x)]))
            self.assertEqual(single.keys().ravel().tolist(), [1.0, 4.0, 5.0])
            self.assertEqual((single.positions(), single.total(), single.size()), ([0, 3, 4], 5, 3))
            if want:
                self.assertEqual(bulk.keys().ravel().tolist(), want)
                self.assertEqual(bulk.positions(), [0, 3, 4])
            else:
                self.assertNotEqual(bulk.keys().view(np.uint64).tolist(), single.keys().view(np.uint64).tolist())

    def test_ring_without_sinks_and_empty_append(self):
        c = ring.RingCache({"capacity": 3, "keep": 0, "d_k": 1, "d_v": 1})
        c.append(rows(1, 2, 3, 4, 5), rows(1, 2, 3, 4, 5))
        c.append(np.zeros((0, 1)), np.zeros((0, 1)))
        self.assertEqual((c.keys().ravel().tolist(), c.positions(), c.total()), ([3.0, 4.0, 5.0], [2, 3, 4], 5))

    def test_growing_steps_and_the_doubling_twin(self):
        c, d = growing.GrowingCache({"step": 4, "d_k": 1, "d_v": 1}), growing.DoublingGrowing({"step": 4, "d_k": 1,
                                                                                              "d_v": 1})
        self.assertEqual(c.reserved_rows(), 0)
        for cache in (c, d):
            cache.append(rows(*range(5)), rows(*range(5)))
            cache.append(rows(*range(4)), rows(*range(4)))
        self.assertEqual((c.reserved_rows(), d.reserved_rows(), c.size()), (12, 10, 9))


def blocks(c, sid):
    return c.block_table(sid)


class HybridTest(unittest.TestCase):
    # Layer 0 slides (window 2), layer 1 keeps every row, layer 2 is shared (reads layer 0), layer 3 reads 2 encoder
    # rows; blocks of 2 rows.
    config = {"capacity": 16, "block_size": 2, "d_k": 1, "d_v": 1, "layers": 3, "window": 2, "keep": 0,
              "global_every": 2, "shared": 1, "cross": 2, "prefix_caching": True}

    @staticmethod
    def append(c, sid, *values):
        k = np.array([values, [10 * x for x in values]], dtype=np.float64).reshape(2, len(values), 1)
        c.append(sid, k, -k, list(values))

    def test_the_window_frees_passed_blocks_and_shared_and_cross_layers_read_theirs(self):
        c = hybrid.HybridCache(self.config)
        s = c.create(rows(100, 101), rows(-100, -101), [])
        self.append(c, s, *range(7))
        self.assertEqual(c.keys(s, 0).ravel().tolist(), [5.0, 6.0])
        self.assertEqual(c.keys(s, 1).ravel().tolist(), [10.0 * x for x in range(7)])
        self.assertEqual(c.keys(s, 2).ravel().tolist(), [5.0, 6.0])
        self.assertEqual(c.keys(s, 3).ravel().tolist(), [100.0, 101.0])
        self.assertEqual((len(c.block_table(s, 0)), len(c.block_table(s, 1)), c.block_table(s, 2)), (2, 4, []))
        self.assertEqual([c.group_blocks(g) for g in ("full", "sliding", "cross")] + [c.free_blocks()], [4, 2, 1, 9])
        with self.assertRaises(kp.IndexRefusal):
            c.decode(s, 4, np.array([1.0]))

    def test_twin_windows_the_full_layers(self):
        c = hybrid.GlobalWindowedHybrid(self.config)
        s = c.create(rows(100, 101), rows(-100, -101), [])
        self.append(c, s, *range(7))
        self.assertEqual(c.keys(s, 1).ravel().tolist(), [50.0, 60.0])

    def test_a_prefix_hit_stops_where_the_sliding_group_lacks_its_window_blocks(self):
        c = hybrid.HybridCache(self.config)
        s = c.create(rows(100, 101), rows(-100, -101), [])
        self.append(c, s, *range(7))  # the window left blocks 0 and 1 (rows 0 to 3) of the sliding group
        hit = c.create(rows(1, 2), rows(-1, -2), [0, 1, 2, 3, 4, 5, 9])
        self.assertEqual(len(c.keys(hit, 1)), 6)  # blocks 0 to 2: the sliding group still holds block 2
        self.assertEqual(c.block_table(hit, 0), c.block_table(s, 0)[:1])
        miss = c.create(rows(1, 2), rows(-1, -2), [0, 1, 2, 3])
        self.assertEqual(len(c.keys(miss, 1)), 0)  # the full group holds blocks 0 and 1, the sliding group not


class PagedTest(unittest.TestCase):
    def config(self, **extra):
        return dict({"capacity": 4, "block_size": 2, "d_k": 1, "d_v": 1, "preempt": False}, **extra)

    def test_fork_shares_and_copies_a_partly_filled_last_block(self):
        for cls, copies in ((paged.PagedCache, True), (paged.ForkWithoutCowPaged, False)):
            c = cls(self.config())
            a = c.create()
            c.append(a, rows(1, 2, 3), rows(1, 2, 3))
            b = c.fork(a)
            self.assertEqual((blocks(c, a), c.ref_counts(), c.free_blocks()), (blocks(c, b), {0: 2, 1: 2}, 2))
            c.append(b, rows(4), rows(4))
            c.append(a, rows(5), rows(5))
            self.assertEqual(c.keys(b).ravel().tolist(), [1.0, 2.0, 3.0, 4.0 if copies else 5.0])
            self.assertEqual(blocks(c, a)[1] != blocks(c, b)[1], copies)
            self.assertEqual(c.bytes_in_use(), (3 if copies else 2) * 2 * 2 * 8)

    def test_preemption_releases_newest_others_or_nothing(self):
        c = paged.PagedCache(self.config(preempt=True))
        a, b, d = c.create(), c.create(), c.create()
        c.append(a, rows(1, 2), rows(1, 2))
        c.append(b, rows(3, 4), rows(3, 4))
        c.append(d, rows(5, 6), rows(5, 6))
        self.assertEqual(c.append(a, rows(*range(5)), rows(*range(5))), [d, b])
        with self.assertRaises(kp.CapacityRefusal):
            c.append(a, rows(*range(4)), rows(*range(4)))
        self.assertEqual((sorted(c.seqs.live), c.free_blocks(), c.keys(a).shape), ([a], 0, (7, 1)))
        plain = paged.PagedCache(self.config())
        s = plain.create()
        with self.assertRaises(kp.CapacityRefusal):
            plain.append(s, rows(*range(9)), rows(*range(9)))
        self.assertEqual((plain.free_blocks(), plain.keys(s).shape), (4, (0, 1)))

    def test_refusal_reasons(self):
        c = paged.PagedCache(self.config())
        with self.assertRaises(kp.IndexRefusal):
            c.append(None, rows(1), np.zeros(3))
        s = c.create()
        with self.assertRaises(kp.ShapeRefusal):
            c.append(s, rows(1), np.zeros(3))
        with self.assertRaises(kp.EmptyRefusal):
            c.decode(s, np.zeros(1))


class LatentTest(unittest.TestCase):
    config = {"capacity": 3, "block_size": 2, "d_k": 3, "d_v": 2, "k_scale": 1.0}  # d_c = 2, d_r = 1

    def test_values_are_the_rows_latent_part(self):
        for cls, columns in ((latent.LatentCache, slice(0, 2)), (latent.ValuesPastRotaryLatent, slice(1, 3))):
            c = cls(self.config)
            s = c.create()
            c.append(s, np.array([[1.0, 2.0, 9.0], [3.0, 4.0, 8.0], [5.0, 6.0, 7.0]]))
            self.assertEqual(c.values(s).tolist(), c.keys(s)[:, columns].tolist())
            with self.assertRaises(kp.ShapeRefusal):  # the latent part alone, without k_r
                c.append(s, np.zeros((1, 2)))
            with self.assertRaises(kp.IndexRefusal):
                c.append(None, np.zeros(4))
        self.assertTrue(np.shares_memory(c.pool.values, c.pool.keys))  # the same storage, not a copy
        fork = c.fork(s)
        c.append(fork, np.zeros(3))  # copies the shared, partly filled last block
        self.assertEqual((c.free_blocks(), c.bytes_in_use()), (0, 3 * 2 * 3 * 8))

    def test_absorbed_decode_equals_the_materialised_heads(self):
        rng = np.random.default_rng(3)
        c = latent.LatentCache(self.config)
        s = c.create()
        rows_ = rng.normal(size=(3, 3))
        c.append(s, rows_)
        q, w_uk, w_uv = rng.normal(size=(2, 2)), rng.normal(size=(2, 1, 2)), rng.normal(size=(2, 4, 2))
        output, weights = c.decode(s, q, w_uk, w_uv)
        for h in range(2):  # keys [W_uk c ; k_r] and values W_uv c, then plain attention scaled by 1/sqrt(1 + 1)
            keys = np.hstack([rows_[:, :2] @ w_uk[h].T, rows_[:, 2:]])
            p = np.exp(keys @ q[h] / np.sqrt(2))
            np.testing.assert_allclose(weights[h], p / p.sum(), rtol=1e-12)
            np.testing.assert_allclose(output[h], (p / p.sum()) @ (rows_[:, :2] @ w_uv[h].T), rtol=1e-12)
        for bad in ((q[0], w_uk, w_uv), (q, w_uk[:, :, :1], w_uv), (q, w_uk, w_uv[:1]), (rng.normal(size=(2, 1)),
                                                                                      w_uk[:, :0], w_uv)):
            with self.assertRaises(kp.ShapeRefusal):
                c.decode(s, *bad)
        with self.assertRaises(kp.EmptyRefusal):
            c.decode(c.create(), q, w_uk, w_uv)

    def test_prefill_steps_are_decodes_over_the_rows_up_to_them(self):
        rng = np.random.default_rng(4)
        whole, stepped = latent.LatentCache(self.config), latent.LatentCache(self.config)
        s, t = whole.create(), stepped.create()
        first, k = rng.normal(size=(1, 3)), rng.normal(size=(2, 3))
        whole.append(s, first), stepped.append(t, first)
        q, w_uk, w_uv = rng.normal(size=(2, 2, 2)), rng.normal(size=(2, 1, 2)), rng.normal(size=(2, 4, 2))
        output, weights = whole.prefill(s, k, q, w_uk, w_uv)
        self.assertEqual((output.shape, weights.shape), ((2, 2, 4), (2, 2, 3)))
        for i in range(2):
            stepped.append(t, k[i])
            out, w = stepped.decode(t, q[i], w_uk, w_uv)
            np.testing.assert_array_equal(output[i], out)
            np.testing.assert_array_equal(weights[i, :, :2 + i], w)
            self.assertTrue((weights[i, :, 2 + i:] == 0).all())
        with self.assertRaises(kp.ShapeRefusal):  # one step's queries for two rows: refused, nothing appended
            whole.prefill(s, k, q[:1], w_uk, w_uv)
        self.assertEqual(len(whole.keys(s)), 3)


class PrefixTest(unittest.TestCase):
    config = {"capacity": 3, "block_size": 2, "d_k": 1, "d_v": 1}

    def test_hits_eviction_order_and_duplicates(self):
        c = prefix.PrefixCache(self.config)
        a = c.create([])
        c.append(a, rows(1, 2, 3), rows(1, 2, 3), [7, 8, 9])  # one full block registered, one partial
        dup = c.create([])
        c.append(dup, rows(5, 6), rows(5, 6), [7, 8])  # same chain: stays unregistered
        c.release(dup)
        self.assertEqual((c.free_blocks(), c.evictable_blocks()), (1, 0))
        c.release(a)
        self.assertEqual((c.free_blocks(), c.evictable_blocks()), (2, 1))
        b = c.create([7, 8, 9, 10])
        self.assertEqual((c.keys(b).ravel().tolist(), c.hit_rows(), c.evictable_blocks()), ([1.0, 2.0], 2, 0))
        c.release(b)
        filler = c.create([])
        c.append(filler, rows(*range(6)), rows(*range(6)), list(range(100, 106)))  # evicts the cached block
        self.assertEqual((c.evictable_blocks(), c.free_blocks()), (0, 0))
        c.release(filler)
        self.assertEqual(c.keys(c.create([7, 8])).shape, (0, 1))

    def test_chain_hash_includes_the_parent(self):
        for cls, found in ((prefix.PrefixCache, [5.0, 6.0, 7.0, 8.0]), (prefix.HashWithoutParentPrefix, [5.0, 6.0, 3.0,
                                                                                                         4.0])):
            c = cls(dict(self.config, capacity=4))
            c.append(c.create([]), rows(1, 2, 3, 4), rows(1, 2, 3, 4), [1, 2, 3, 4])
            c.append(c.create([]), rows(5, 6, 7, 8), rows(5, 6, 7, 8), [5, 6, 3, 4])
            self.assertEqual(c.keys(c.create([5, 6, 3, 4])).ravel().tolist(), found)


class BeamTest(unittest.TestCase):
    config = {"layers": 2, "batch": 2, "heads": 1, "q_heads": 2, "capacity": 4, "d_k": 1, "d_v": 1}

    def test_reorder_copies_repeats(self):
        for cls, aliases in ((beam.BeamCache, False), (beam.ReorderAliasesBeam, True)):
            c = cls(self.config)
            c.update(0, 0, np.array([1.0, 2.0]).reshape(2, 1, 1, 1), np.array([3.0, 4.0]).reshape(2, 1, 1, 1))
            c.reorder([1, 1])
            c.update(0, 1, np.array([5.0, 6.0]).reshape(2, 1, 1, 1), np.array([7.0, 8.0]).reshape(2, 1, 1, 1))
            self.assertEqual(c.keys(0).ravel().tolist(), [2.0, 6.0, 2.0, 6.0] if aliases else [2.0, 5.0, 2.0, 6.0])

    def test_gqa_masks_and_memory(self):
        c = beam.BeamCache(self.config)
        c.update(0, 0, np.arange(4.0).reshape(2, 1, 2, 1), np.arange(4.0).reshape(2, 1, 2, 1))
        out, w = c.decode(0, np.ones((2, 2, 1)), np.array([[0.0, 1.0], [0.0, 0.0]]))
        self.assertEqual(w.tolist(), [[[0.0, 1.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
        self.assertEqual(out.ravel().tolist(), [1.0, 1.0, 0.0, 0.0])
        with self.assertRaises(kp.ShapeRefusal):
            c.decode(0, np.ones((2, 2, 2)), None)
        with self.assertRaises(kp.EmptyRefusal):
            c.decode(1, np.ones((2, 2, 1)), None)
        with self.assertRaises(kp.IndexRefusal):
            c.update(1, 1, np.zeros((2, 1, 1, 1)), np.zeros((2, 1, 1, 1)))
        c.update(0, 1, np.zeros((2, 1, 0, 1)), np.zeros((2, 1, 0, 1)))  # a rollback of one position
        self.assertEqual((c.length(0), c.bytes(), c.bytes_per_token(), c.max_batch_tokens(1 << 20)),
                         (1, 2 * 2 * 2 * 1 * 4 * 8, 2 * 2 * 1 * 1 * 8, (1 << 20) // 32))

    def test_prefill_attends_causally_after_the_held_positions(self):
        for cls, top_left in ((beam.BeamCache, False), (beam.PrefillTopLeftBeam, True)):
            c = cls(dict(self.config, layers=1))
            c.update(0, 0, np.array([1.0, 2.0]).reshape(2, 1, 1, 1), np.array([1.0, 2.0]).reshape(2, 1, 1, 1))
            out, w = c.prefill(0, np.zeros((2, 1, 2, 1)), np.array([10.0, 20, 30, 40]).reshape(2, 1, 2, 1),
                               np.zeros((2, 2, 2, 1)), np.array([[1.0, 1, 1], [0, 1, 1]]))
            self.assertEqual((out.shape, w.shape, c.length(0)), ((2, 2, 2, 1), (2, 2, 2, 3), 3))
            if top_left:  # query 0 sees the held position alone, query 1 misses the newest
                self.assertEqual(w[0, 0].tolist(), [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
                continue
            self.assertEqual(w[0, 0].tolist(), [[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
            self.assertEqual(w[1, 1].tolist(), [[0.0, 1.0, 0.0], [0.0, 0.5, 0.5]])  # row 1's mask hides position 0
            self.assertEqual(out[1, 0, :, 0].tolist(), [30.0, 35.0])
        with self.assertRaises(kp.ShapeRefusal):
            c.prefill(0, np.zeros((2, 1, 1, 1)), np.zeros((2, 1, 1, 1)), np.zeros((2, 2, 1, 1)), np.ones((2, 3)))
        with self.assertRaises(kp.CapacityRefusal):
            c.prefill(0, np.zeros((2, 1, 2, 1)), np.zeros((2, 1, 2, 1)), np.zeros((2, 2, 2, 1)), None)
        out, w = c.prefill(0, np.zeros((2, 1, 0, 1)), np.zeros((2, 1, 0, 1)), np.zeros((2, 2, 0, 1)), None)
        self.assertEqual((out.shape, w.shape, c.length(0)), ((2, 2, 0, 1), (2, 2, 0, 3), 3))


if __name__ == "__main__":
    unittest.main()
