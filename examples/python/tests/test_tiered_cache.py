"""Unit tests of the numpy tiered cache on docs/kinds/tiered.md's rules, and of the bugs its twins seed."""
import unittest

import numpy as np

import kvconform_port as kp
from numpy_caches import tiered

# Tier blocks of two device blocks of one row each; a host of two tier blocks and no disk.
CONFIG = {"capacity": 4, "block_size": 1, "d_k": 1, "d_v": 1, "host_blocks": 2, "host_factor": 2, "disk_blocks": 0}
K, V = np.array([[1.0], [2.0]]), np.array([[3.0], [4.0]])


def cache(cls=tiered.TieredCache, **config):
    return cls(dict(CONFIG, **config))


class TieredCacheTest(unittest.TestCase):
    def test_a_host_hit_arrives_at_completion(self):
        c = cache()
        c.put(1, [5, 6], K, V)
        s = c.create([5, 6, 7])
        n = c.load(s, 1)
        self.assertEqual((c.keys(s).shape, c.block_table(s), c.tier_counts(1)["pinned"]), ((0, 1), [0, 1], 1))
        for op, args in ((c.append, (s, K[:1], V[:1], [7])), (c.decode, (s, np.ones(1))), (c.release, (s,)),
                         (c.load, (s, 1)), (c.store, (s, 0, 1))):
            with self.assertRaises(kp.PendingRefusal):
                op(*args)
        c.complete(n)
        self.assertEqual((c.keys(s).ravel().tolist(), c.values(s).ravel().tolist()), ([1.0, 2.0], [3.0, 4.0]))
        self.assertEqual(c.tier_counts(1), {"free": 1, "cached": 1, "pinned": 0, "pending": 0, "hit_rows": 2})
        self.assertEqual(c.entries(1)[0][0], (5, 6))
        with self.assertRaises(kp.IndexRefusal):
            c.complete(n)

    def test_a_load_past_a_device_hit_takes_only_the_blocks_past_it(self):
        for cls, table, evictable in ((tiered.TieredCache, [0, 1], 0), (tiered.OverlapDeviceHitTiered, [1, 2], 1)):
            c = cache(cls)
            c.put(1, [5, 6], K, V)
            s = c.create([5, 6])
            c.append(s, K[:1], V[:1], [5])  # the device holds row 0 in block 0, registered
            c.complete(c.load(s, 1))
            # The twin took new blocks for the whole tier block and gave up block 0, which stays cached.
            self.assertEqual((c.block_table(s), c.evictable_blocks()), (table, evictable), cls)
            self.assertEqual(c.keys(s).ravel().tolist(), [1.0, 2.0])

    def test_a_pending_store_holds_its_sources_past_their_release(self):
        for cls, evictable, refs in ((tiered.TieredCache, 0, {0: 1, 1: 1}), (tiered.ReusePendingSourceTiered, 2, {})):
            c = cache(cls)
            s = c.create([5, 6])
            c.append(s, K, V, [5, 6])
            n = c.store(s, 0, 1)
            c.release(s)  # blocks 0 and 1 are registered: evictable once nothing holds them
            self.assertEqual((c.free_blocks(), c.evictable_blocks(), c.ref_counts()), (2, evictable, refs), cls)
            c.complete(n)
            self.assertEqual((c.evictable_blocks(), c.entries(1)[0][1].ravel().tolist()), (2, [1.0, 2.0]))

    def test_a_failed_load_leaves_the_sequence_as_before(self):
        for cls, rows in ((tiered.TieredCache, 0), (tiered.FailedLoadKeepsLengthTiered, 2)):
            c = cache(cls)
            c.put(1, [5, 6], K, V)
            s = c.create([5, 6])
            self.assertEqual(c.fail(c.load(s, 1)), [])
            self.assertEqual((c.keys(s).shape[0], c.tier_counts(1)["pinned"]), (rows, 0), cls)

    def test_a_full_host_evicts_its_least_recently_used_unpinned_entry(self):
        c = cache(host_blocks=1)
        c.put(1, [5, 6], K, V)
        s = c.create([5, 6])
        n = c.load(s, 1)
        with self.assertRaises(kp.CapacityRefusal):  # the one entry is pinned by the load
            c.put(1, [7, 8], K, V)
        c.complete(n)
        c.put(1, [7, 8], K, V)
        self.assertEqual([e[0] for e in c.entries(1)], [(7, 8)])


if __name__ == "__main__":
    unittest.main()
