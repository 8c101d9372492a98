"""Unit tests of the library's tiered kind: transfer numbers mapped to the cache's ids, a failed load's release
answered as a preemption, the observation's transfer and entry streams, the config and the tiered refusals."""
import unittest

import numpy as np

import kvconform_port as kp

CONFIG = {"kind": "tiered", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1, "host_blocks": 2, "host_factor": 1}


class Slots(kp.TieredAdapter):
    """A tiered cache reduced to its transfers, whose ids are the lowest free slot, as a slot allocator gives them:
    an ended transfer's id comes back for the next one. Store block 8 is not written yet, block 9 is on host already;
    a failed load releases its sequence (load_failure=abort)."""

    policies = {"load_failure": "abort"}

    def __init__(self, config):
        super().__init__(config)
        self.live, self.pending, self.seen = [], {}, []

    def create(self, tokens):
        self.live.append(f"s{len(self.live)}")
        return self.live[-1]

    def store(self, seq, block, tier):
        self.seen.append(("store", seq))
        if seq not in self.live:
            raise kp.IndexRefusal(f"no {seq}")
        if block == 8:
            raise kp.PendingRefusal("rows not all written")
        return None if block == 9 else self.begin(None, [block])

    def load(self, seq, tier):
        self.seen.append(("load", seq))
        return self.begin(seq, [])

    def begin(self, loading, blocks):
        tid = min(set(range(9)) - set(self.pending))
        self.pending[tid] = (loading, blocks)
        return tid

    def complete(self, tid):
        self.seen.append(("end", tid))
        if tid not in self.pending:
            raise kp.IndexRefusal(f"no pending transfer {tid}")
        return self.pending.pop(tid)[0]

    def fail(self, tid):
        seq = self.complete(tid)
        if seq is None:
            return []
        self.live.remove(seq)
        return [seq]

    keys = values = lambda self, seq: np.zeros((0, 1))
    block_table = lambda self, seq: []
    ref_counts = lambda self: {}
    free_blocks = evictable_blocks = hit_rows = lambda self: 0

    def pending_transfers(self):
        return {tid: blocks for tid, (_, blocks) in self.pending.items()}

    def entries(self, tier):  # in no order: the library sorts them by chain
        return [((2, 10), np.ones((1, 1)), np.ones((1, 1))), ((2,), np.zeros((1, 1)), np.zeros((1, 1)))]

    def tier_counts(self, tier):
        return {"free": 0, "cached": 2, "pinned": 0, "pending": tier, "hit_rows": 0}


class TransfersTest(unittest.TestCase):
    """Transfers are numbered by the store and load requests before them, refused ones and stores that copied nothing
    included; the adapter sees only its own ids, and None for a number that names no transfer of its."""

    def setUp(self):
        self.port, self.ids = kp.Port("p", [Slots]), iter(range(1, 100))

    def ask(self, op, **fields):
        return self.port.handle(dict(fields, id=next(self.ids), op=op, cache=1))

    def test_numbers_map_to_the_cache_ids(self):
        self.assertTrue(self.ask("open", config=CONFIG)["ok"])
        adapter = self.port.caches[1].adapter
        self.ask("create", tokens=[1, 2])                                              # handle 0: s0
        self.assertEqual(self.ask("store", seq=5, block=0, tier=1)["error"], "index")  # number 0: refused
        self.assertEqual(self.ask("store", seq=0, block=8, tier=1)["error"], "pending")  # number 1: refused
        self.assertTrue(self.ask("store", seq=0, block=9, tier=1)["ok"])  # number 2: nothing copied, no transfer
        self.assertTrue(self.ask("store", seq=0, block=0, tier=1)["ok"])  # number 3: id 0
        self.assertTrue(self.ask("load", seq=0, tier=1)["ok"])             # number 4: id 1
        for number in (0, 1, 2, 7, -1):  # no transfer: the cache sees None and refuses it
            self.assertEqual(self.ask("complete", transfer=number)["error"], "index")
        self.assertTrue(self.ask("complete", transfer=3)["ok"])
        self.assertTrue(self.ask("store", seq=0, block=1, tier=1)["ok"])   # number 5: id 0 again
        self.assertEqual(self.ask("complete", transfer=3)["error"], "index")  # never number 5's id 0
        self.assertEqual(adapter.seen, [("store", None)] + [("store", "s0")] * 3 + [("load", "s0")] +
                         [("end", None)] * 5 + [("end", 0), ("store", "s0"), ("end", None)])
        self.assertEqual(adapter.pending, {0: (None, [1]), 1: ("s0", [])})

    def test_observation_names_transfers_by_number_and_entries_by_chain(self):
        self.ask("open", config=dict(CONFIG, disk_blocks=3))
        self.ask("create", tokens=[2])
        self.ask("store", seq=0, block=4, tier=1)  # number 0: id 0, which it gives back
        self.ask("load", seq=0, tier=1)            # number 1: id 1
        self.ask("complete", transfer=0)
        self.ask("store", seq=0, block=6, tier=1)  # number 2: id 0, listed first by the cache
        answer = self.ask("observe")
        self.assertEqual([s["name"] for s in answer["streams"]],
                         ["seq 0", "transfer 1", "transfer 2", "host 2", "host 2,10", "disk 2", "disk 2,10"])
        self.assertEqual([s.get("blocks") for s in answer["streams"][1:3]], [[], [6]])
        self.assertEqual(answer["streams"][1]["keys"], {"shape": [0, 1], "data": []})
        self.assertEqual(answer["streams"][4]["values"], {"shape": [1, 1], "data": [1.0]})
        self.assertEqual(answer["counters"], {"free_blocks": 0, "evictable_blocks": 0, "hit_rows": 0,
                                              "host_free": 0, "host_cached": 2, "host_pinned": 0, "host_pending": 1,
                                              "host_hit_rows": 0, "disk_free": 0, "disk_cached": 2, "disk_pinned": 0,
                                              "disk_pending": 2, "disk_hit_rows": 0})
        digests = self.ask("observe", digest=True)["streams"]
        self.assertEqual([(s["name"], s["rows"], s.get("blocks")) for s in digests[1:3]],
                         [("transfer 1", 0, []), ("transfer 2", 0, [6])])

    def test_a_failed_load_answers_the_released_handle_as_preempted(self):
        self.ask("open", config=CONFIG)
        self.ask("create", tokens=[1])             # handle 0: s0
        self.ask("create", tokens=[1])             # handle 1: s1
        self.ask("store", seq=0, block=0, tier=1)  # number 0
        self.ask("load", seq=1, tier=1)            # number 1
        answer = self.ask("fail", transfer=0)  # a store releases nothing
        self.assertEqual((answer["ok"], "preempted" in answer), (True, False))
        self.assertEqual(self.ask("fail", transfer=1)["preempted"], [1])
        self.assertEqual([s["name"] for s in self.ask("observe")["streams"]], ["seq 0", "host 2", "host 2,10"])
        self.assertEqual(self.ask("fail", transfer=1)["error"], "index")


class TieredDeclarationTest(unittest.TestCase):
    def test_hello_config_and_refusal_reasons(self):
        from numpy_caches.tiered import TieredCache
        port = kp.Port("p", [Slots])
        kinds = port.handle({"id": 1, "op": "hello", "protocol": 2})["kinds"]
        self.assertEqual(kinds, {"tiered": {"capabilities": [], "policies": {"load_failure": "abort"}}})
        self.assertNotIn("extra_keys", TieredCache.capabilities())  # built on a prefix cache that takes them
        self.assertEqual(TieredCache.capabilities(), ["decode", "prefill", "rollback"])
        for bad in (dict(CONFIG, disk_blocks=-1), dict(CONFIG, disk_blocks=True), {**CONFIG, "host_factor": 0},
                    {k: v for k, v in CONFIG.items() if k != "host_blocks"}, dict(CONFIG, extra=1)):
            with self.assertRaises(kp.ProtocolError, msg=bad):
                port.handle({"id": 2, "op": "open", "cache": 2, "config": bad})
        self.assertTrue(port.handle({"id": 3, "op": "open", "cache": 3, "config": CONFIG})["ok"])
        self.assertEqual(port.caches[3].adapter.config["disk_blocks"], 0)
        self.assertEqual((kp.PendingRefusal.reason, kp.OrderRefusal.reason), ("pending", "order"))

        class Fifo(Slots):
            class OutOfOrder(Exception):
                pass
            refusals = {OutOfOrder: "order"}

            def complete(self, tid):
                raise Fifo.OutOfOrder("an earlier transfer of its direction is pending")
        port = kp.Port("p", [Fifo])
        port.handle({"id": 1, "op": "open", "cache": 1, "config": CONFIG})
        answer = port.handle({"id": 2, "op": "complete", "cache": 1, "transfer": 0})
        self.assertEqual((answer["error"], answer["message"]),
                         ("order", "an earlier transfer of its direction is pending"))


if __name__ == "__main__":
    unittest.main()
