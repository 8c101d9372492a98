"""Unit tests of the kvconform_port library: digest, codec, handshake, refusals, handles, poisoning, the loop."""
import io
import json
import pathlib
import random
import struct
import subprocess
import sys
import unittest

import numpy as np

import kvconform_port as kp
from kvconform_port import codec

M64 = (1 << 64) - 1


def reference_digest(words):
    """docs/port-protocol.md §8 word by word with Python integers, independently of the numpy version."""
    total = 0
    for i, w in enumerate(words):
        z = (w + (i + 1) * 0x9E3779B97F4A7C15) & M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        total = (total + (z ^ (z >> 31))) & M64
    return total


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


class DigestTest(unittest.TestCase):
    def test_protocol_test_value(self):
        words = [1, 1, 1, 0, 0x3FF0000000000000, 0x8000000000000000]
        self.assertEqual(f"{kp.digest_words(words):016x}", "6df79e60fda6e4c9")
        self.assertEqual(kp.stream_digest(np.array([[1.0]]), np.array([[-0.0]])), "6df79e60fda6e4c9")
        self.assertNotEqual(kp.stream_digest(np.array([[1.0]]), np.array([[0.0]])), "6df79e60fda6e4c9")

    def test_matches_word_by_word_reference(self):
        rng = random.Random(7)
        specials = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 5e-324, -1.7976931348623157e308]
        for rows, d_k, d_v, with_positions in ((0, 3, 2, False), (3, 2, 5, True), (17, 4, 1, True), (2, 1, 1, False)):
            keys = np.array([rng.choice(specials + [rng.uniform(-1e6, 1e6)]) for _ in range(rows * d_k)])
            keys = keys.reshape(rows, d_k)
            values = np.array([rng.gauss(0, 1) for _ in range(rows * d_v)]).reshape(rows, d_v)
            positions = [rng.randrange(-(1 << 63), 1 << 63) for _ in range(rows)] if with_positions else []
            words = [rows, d_k, d_v, len(positions)] + [bits(x) for x in keys.ravel()] + \
                [bits(x) for x in values.ravel()] + [p & M64 for p in positions]
            self.assertEqual(kp.stream_digest(keys, values, positions), f"{reference_digest(words):016x}")

    def test_batch_equals_one_by_one(self):
        rng = np.random.default_rng(5)
        for rows in (0, 1, 3):
            keys, values = rng.normal(size=(6, rows, 4)), rng.normal(size=(6, rows, 2))
            keys[0, :, 0] = -0.0
            self.assertEqual(kp.digest.stream_digests(keys, values),
                             [kp.stream_digest(k, v) for k, v in zip(keys, values)])

    def test_every_field_enters(self):
        base = kp.stream_digest(np.array([[1.0, 2.0]]), np.array([[3.0]]), [4])
        self.assertNotEqual(base, kp.stream_digest(np.array([[1.0, 2.0]]), np.array([[3.0]]), [5]))
        self.assertNotEqual(base, kp.stream_digest(np.array([[1.0, 2.0]]), np.array([[3.0]])))
        self.assertNotEqual(base, kp.stream_digest(np.array([[1.0], [2.0]]), np.array([[3.0], [3.0]]), [4, 4]))
        self.assertNotEqual(kp.stream_digest(np.array([[2.0, 1.0]]), np.array([[3.0]]), [4]), base)


class CodecTest(unittest.TestCase):
    def test_round_trip_is_bit_exact(self):
        rng = random.Random(3)
        values = [0.1, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, float("inf"), -float("inf")]
        values += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(2000)]
        values = [x for x in values if x == x] + [float("nan")]
        a = np.array(values)
        text = json.dumps(codec.tensor(a), allow_nan=False)
        back = codec.array_from(json.loads(text), "t")
        self.assertTrue(np.array_equal(back.view(np.uint64), a.view(np.uint64)))
        self.assertIn('"nan"', text)
        self.assertIn("-0.0", text)

    def test_shapes_are_kept(self):
        self.assertEqual(codec.array_from({"shape": [], "data": [2.5]}, "t").shape, ())
        self.assertEqual(codec.array_from({"shape": [0, 3], "data": []}, "t").shape, (0, 3))
        self.assertEqual(codec.array_from({"shape": [1, 2], "data": [1, 2]}, "t").shape, (1, 2))

    def test_malformed_tensors_are_rejected(self):
        for bad in ({"shape": [2], "data": [1.0]}, {"shape": [1], "data": [True]}, {"shape": [1], "data": ["NaN"]},
                    {"shape": [1], "data": [None]}, {"shape": [1, 1, 1, 1, 1], "data": [1.0]},
                    {"shape": [-1], "data": []}, {"shape": [1.0], "data": [1.0]}, {"shape": [1]},
                    {"shape": [1], "data": [1.0], "extra": 1}, [1.0], {"shape": [1], "data": "1.0"}):
            with self.assertRaises(kp.ProtocolError, msg=bad):
                codec.array_from(bad, "t")

    def test_integers_are_not_booleans(self):
        with self.assertRaises(kp.ProtocolError):
            codec.integer(True, "seq")
        with self.assertRaises(kp.ProtocolError):
            codec.integers([1, 2.0], "index")


class Keeper(kp.FlatAdapter):
    """A cache that keeps references to its inputs instead of copies (and maps its own exceptions)."""

    class Full(Exception):
        pass

    refusals = {Full: "capacity"}

    def __init__(self, config):
        super().__init__(config)
        self.rows = []

    def append(self, k, v):
        if k.ndim != 1:
            raise Keeper.Full("one row at a time")
        if k.shape == (3,):
            k[0] = 1.0  # a cache must not write into its inputs
        if k.shape == (4,):
            raise RuntimeError("a bug of the cache")
        self.rows.append((k, v))

    def keys(self):
        return np.array([k for k, _ in self.rows]).reshape(len(self.rows), -1)

    def values(self):
        return np.array([v for _, v in self.rows]).reshape(len(self.rows), -1)

    def size(self):
        return len(self.rows)


def tensor(*rows):
    a = np.array(rows, dtype=np.float64)
    return codec.tensor(a)


class PortTest(unittest.TestCase):
    def setUp(self):
        self.ids = iter(range(1, 1000))

    def ask(self, port, op, **fields):
        return port.handle(dict(fields, id=next(self.ids), op=op))

    def open_flat(self, port, cache=1, capacity=4):
        return self.ask(port, "open", cache=cache, config={"kind": "flat", "capacity": capacity, "d_k": 2, "d_v": 2})

    def test_hello_declares_kinds_profiles_capabilities_and_digest(self):
        from numpy_port import CACHES
        from numpy_caches.flat import Flat32Cache
        answer = self.ask(kp.Port("p", CACHES), "hello", protocol=2)
        self.assertEqual((answer["ok"], answer["protocol"], answer["name"], answer["digest"]), (True, 2, "p", True))
        self.assertEqual(set(answer["kinds"]), {"flat", "ring", "growing", "paged", "prefix", "beam", "hybrid",
                                                "latent", "tiered", "recurrent", "radix"})
        self.assertEqual(answer["kinds"]["prefix"]["capabilities"],
                         ["decode", "prefill", "rollback", "extra_keys", "phases"])
        # Built on the prefix cache, whose extra keys and phases are no capabilities of these kinds.
        self.assertEqual(answer["kinds"]["tiered"]["capabilities"], ["decode", "prefill", "rollback"])
        self.assertEqual(answer["kinds"]["radix"]["capabilities"], ["decode", "prefill", "rollback"])
        self.assertEqual(answer["kinds"]["ring"]["capabilities"], ["decode", "prefill", "rollback", "sinks"])
        self.assertEqual(answer["kinds"]["paged"]["capabilities"], ["decode", "prefill", "rollback", "preempt"])
        self.assertEqual(answer["kinds"]["beam"]["capabilities"], ["decode", "prefill"])  # its rollback is an update
        self.assertEqual(answer["kinds"]["recurrent"], {"capabilities": ["rollback"]})  # no policies: the contract's
        # Built on the paged cache, whose preemption is no op of the latent kind; its prefill is its own.
        self.assertEqual(answer["kinds"]["latent"], {"capabilities": ["decode", "prefill", "rollback"],
                                                     "profile": {"latent_path": "absorbed"}})
        self.assertNotIn("profile", answer["kinds"]["flat"])
        answer = self.ask(kp.Port("p", [Flat32Cache], digest=False), "hello", protocol=2)
        self.assertEqual(answer["kinds"], {"flat": {"capabilities": ["decode", "prefill", "rollback"],
                                                    "profile": {"storage": "f32", "working": "f32"}}})
        self.assertFalse(answer["digest"])
        self.assertEqual(self.ask(kp.Port("p", [Keeper]), "hello", protocol=2)["kinds"]["flat"]["capabilities"], [])

    def test_version_1_exchange_without_hello(self):
        from numpy_caches.flat import FlatCache
        port = kp.Port("p", [FlatCache])
        self.assertTrue(self.open_flat(port)["ok"])
        self.assertTrue(self.ask(port, "append", cache=1, k=tensor(1.0, 2.0), v=tensor(3.0, 4.0))["ok"])
        stream = self.ask(port, "observe", cache=1)["streams"][0]
        self.assertEqual(stream["keys"], {"shape": [1, 2], "data": [1.0, 2.0]})

    def test_unserved_kind_and_missing_op_are_unsupported(self):
        port = kp.Port("p", [Keeper])
        answer = self.ask(port, "open", cache=1, config={"kind": "ring", "capacity": 2, "d_k": 1, "d_v": 1})
        self.assertEqual((answer["ok"], answer["error"]), (False, "unsupported"))
        self.assertEqual(self.ask(port, "append", cache=1, k=tensor(1.0), v=tensor(1.0))["error"], "unsupported")
        self.assertTrue(self.ask(port, "close", cache=1)["ok"])
        self.open_flat(port, cache=2)
        self.assertEqual(self.ask(port, "decode", cache=2, q=tensor(1.0, 0.0))["error"], "unsupported")
        self.assertEqual(self.ask(port, "fork", cache=2, seq=0)["error"], "unsupported")

    def test_policies_and_extra_keys_in_hello_and_creates(self):
        from engine_caches.vllm_prefix import VllmPrefixCache
        from numpy_caches.paged import PagedCache
        kinds = self.ask(kp.Port("p", [VllmPrefixCache]), "hello", protocol=2)["kinds"]
        self.assertEqual(kinds["prefix"]["policies"], {"hit_limit": "all_but_last", "duplicates": "registered",
                                                       "free_order": "one_queue", "rollback_blocks": "kept"})
        self.assertIn("extra_keys", kinds["prefix"]["capabilities"])
        self.assertNotIn("policies", self.ask(kp.Port("p", [PagedCache]), "hello", protocol=2)["kinds"]["paged"])
        config = {"kind": "prefix", "capacity": 4, "block_size": 1, "d_k": 1, "d_v": 1}

        class Unkeyed(VllmPrefixCache):
            supports_extra_keys = False

            def create(self, tokens):  # a cache that takes no key is called without one
                return super().create(tokens, 0)
        for cls in (VllmPrefixCache, Unkeyed):
            port = kp.Port("p", [cls])
            self.ask(port, "open", cache=1, config=config)
            self.assertTrue(self.ask(port, "create", cache=1, tokens=[1])["ok"])
            keyed = self.ask(port, "create", cache=1, tokens=[1], extra_key=3)
            self.assertEqual(keyed.get("error"), None if cls is VllmPrefixCache else "unsupported")

    def test_sinks_and_preemption_need_the_capability(self):
        class NoSinks(kp.RingAdapter):
            pass
        answer = self.ask(kp.Port("p", [NoSinks]), "open", cache=1,
                          config={"kind": "ring", "capacity": 3, "keep": 1, "d_k": 1, "d_v": 1})
        self.assertEqual(answer["error"], "unsupported")
        from engine_caches.vllm_hybrid import VllmHybridCache  # a hybrid cache without sinks
        self.assertNotIn("sinks", VllmHybridCache.capabilities())
        answer = self.ask(kp.Port("p", [VllmHybridCache]), "open", cache=1,
                          config={"kind": "hybrid", "capacity": 4, "block_size": 1, "d_k": 1, "d_v": 1, "layers": 1,
                                  "window": 2, "keep": 1})
        self.assertEqual(answer["error"], "unsupported")

    def test_refusals_map_from_exception_classes(self):
        port = kp.Port("p", [Keeper])
        self.open_flat(port)
        answer = self.ask(port, "append", cache=1, k=tensor([1.0, 2.0]), v=tensor([1.0, 2.0]))
        self.assertEqual((answer["ok"], answer["error"], answer["message"]), (False, "capacity", "one row at a time"))
        with self.assertRaises(RuntimeError):  # not a refusal: a bug, which the loop reports and exits on
            self.ask(port, "append", cache=1, k=tensor(1.0, 2.0, 3.0, 4.0), v=tensor(1.0))
        with self.assertRaises(ValueError):
            kp.Port("p", [type("Bad", (Keeper,), {"refusals": {KeyError: "full"}})])

    def test_inputs_are_read_only_then_poisoned(self):
        port = kp.Port("p", [Keeper])
        self.open_flat(port)
        self.ask(port, "append", cache=1, k=tensor(1.0, 2.0), v=tensor(3.0, 4.0))
        keys = np.asarray(self.ask(port, "observe", cache=1)["streams"][0]["keys"]["data"], dtype=object)
        self.assertEqual(list(keys), ["nan", "nan"])
        self.assertEqual(port.caches[1].adapter.keys().view(np.uint64)[0, 0], np.float64(kp.POISON).view(np.uint64))
        with self.assertRaises(ValueError):  # assignment destination is read-only
            self.ask(port, "append", cache=1, k=tensor(1.0, 2.0, 3.0), v=tensor(1.0))
        unpoisoned = kp.Port("p", [Keeper], poison=False)
        self.open_flat(unpoisoned)
        self.ask(unpoisoned, "append", cache=1, k=tensor(1.0, 2.0), v=tensor(3.0, 4.0))
        self.assertEqual(self.ask(unpoisoned, "observe", cache=1)["streams"][0]["keys"]["data"], [1.0, 2.0])

    def test_protocol_errors(self):
        port = kp.Port("p", [Keeper])
        self.open_flat(port)
        for request in ({"op": "observe", "cache": 1}, {"id": True, "op": "observe", "cache": 1},
                        {"id": 1, "op": "observe", "cache": 9}, {"id": 1, "op": "observe", "cache": 1, "x": 0},
                        {"id": 1, "op": "append", "cache": 1, "k": tensor(1.0, 1.0)},
                        {"id": 1, "op": "open", "cache": 1, "config": {"kind": "flat", "capacity": 4, "d_k": 2,
                                                                     "d_v": 2}},
                        {"id": 1, "op": "open", "cache": 2, "config": {"kind": "flat", "capacity": 0, "d_k": 2,
                                                                     "d_v": 2}},
                        {"id": 1, "op": "open", "cache": 2, "config": {"kind": "flat", "capacity": 2, "d_k": 2}},
                        {"id": 1, "op": "observe", "cache": 1, "digest": 1}, [1]):
            with self.assertRaises(kp.ProtocolError, msg=request):
                port.handle(request)


class LatentPortTest(unittest.TestCase):
    """The latent kind over the port: a config with k_scale alone, appends without v, decodes flattened per head."""

    def test_appends_carry_no_v_and_decodes_answer_every_head(self):
        from numpy_caches.latent import LatentCache
        port, ids = kp.Port("p", [LatentCache]), iter(range(1, 100))
        ask = lambda op, **f: port.handle(dict(f, id=next(ids), op=op, cache=1))  # noqa: E731
        self.assertTrue(ask("open", config={"kind": "latent", "capacity": 2, "block_size": 2, "d_k": 3, "d_v": 2,
                                            "k_scale": 1})["ok"])
        ask("create")
        self.assertTrue(ask("append", seq=0, k=tensor([1.0, 2.0, 0.5], [3.0, 4.0, -0.5]))["ok"])
        with self.assertRaises(kp.ProtocolError):  # the kind's append has no field v
            port.handle({"id": 98, "op": "append", "cache": 1, "seq": 0, "k": tensor(1.0, 2.0, 0.5),
                         "v": tensor(1.0, 2.0)})
        stream = ask("observe")["streams"][0]
        self.assertEqual((stream["keys"]["shape"], stream["values"]["data"]), ([2, 3], [1.0, 2.0, 3.0, 4.0]))
        q, w_uk, w_uv = np.zeros((2, 2)), np.zeros((2, 1, 2)), np.ones((2, 3, 2))
        answer = ask("decode", seq=0, q=codec.tensor(q), w_uk=codec.tensor(w_uk), w_uv=codec.tensor(w_uv))
        self.assertEqual((answer["output"], answer["weights"]), ([5.0] * 6, [0.5] * 4))  # (2, 3) and (2, 2), flat
        self.assertEqual(ask("decode", seq=0, q=codec.tensor(q[0]), w_uk=codec.tensor(w_uk),
                             w_uv=codec.tensor(w_uv))["error"], "shape")
        # A prefill of one more row: its step's two heads over all three rows, weights (1, 2, 3), flat.
        answer = ask("prefill", seq=0, k=tensor([5.0, 6.0, 0.0]), q=codec.tensor(q[None]), w_uk=codec.tensor(w_uk),
                     w_uv=codec.tensor(w_uv))
        self.assertEqual((answer["output"], answer["weights"]), ([7.0] * 6, [1 / 3] * 6))
        self.assertEqual(ask("prefill", seq=0, k=tensor([5.0, 6.0, 0.0]), q=codec.tensor(q), w_uk=codec.tensor(w_uk),
                             w_uv=codec.tensor(w_uv))["error"], "shape")  # q of one step without its step dimension
        with self.assertRaises(kp.ProtocolError):  # a latent config has no v_scale
            port.handle({"id": 99, "op": "open", "cache": 2, "config": {"kind": "latent", "capacity": 2,
                                                                       "block_size": 2, "d_k": 3, "d_v": 2,
                                                                       "v_scale": 1.0}})


class LoopTest(unittest.TestCase):
    def run_lines(self, lines, adapters=None):
        from numpy_caches.flat import FlatCache
        out, err = io.StringIO(), io.StringIO()
        code = kp.run(kp.Port("p", adapters or [FlatCache]), [x.encode() for x in lines], out, err)
        return code, out.getvalue().splitlines(), err.getvalue()

    def test_exit_codes(self):
        opened = '{"id":1,"op":"open","cache":1,"config":{"kind":"flat","capacity":2,"d_k":1,"d_v":1}}'
        self.assertEqual(self.run_lines([opened])[:2], (0, ['{"id":1,"ok":true}']))
        code, out, err = self.run_lines([opened, "{not json"])
        self.assertEqual((code, len(out)), (2, 1))
        self.assertIn("line 2 breaks the protocol", err)
        code, _, err = self.run_lines(['{"id":1,"op":"observe","cache":1,"digest":NaN}'])
        self.assertEqual(code, 2)
        append = '{"id":2,"op":"append","cache":1,"k":{"shape":[4],"data":[1,1,1,1]},"v":{"shape":[1],"data":[1]}}'
        code, out, err = self.run_lines([opened, append], [Keeper])
        self.assertEqual(code, 1)
        self.assertIn("RuntimeError: a bug of the cache", err)


class ProcessTest(unittest.TestCase):
    """The port as the harness sees it: a process answering each line at once, exiting at EOF."""

    PORT = pathlib.Path(__file__).resolve().parent.parent / "numpy_port.py"

    def start(self, *args):
        return subprocess.Popen([sys.executable, str(self.PORT), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def test_answers_are_flushed_and_eof_ends_the_port(self):
        port = self.start()
        try:
            config = '{"kind":"ring","capacity":2,"keep":1,"d_k":1,"d_v":1}'
            for request in ('{"id":1,"op":"hello","protocol":2}', '{"id":2,"op":"open","cache":1,"config":%s}' % config,
                            '{"id":3,"op":"observe","cache":1,"digest":true}'):
                port.stdin.write(request + "\n")
                port.stdin.flush()
                answer = json.loads(port.stdout.readline())  # before EOF: the port flushed it
                self.assertEqual((answer["id"], answer["ok"]), (json.loads(request)["id"], True))
            self.assertEqual(answer["streams"], [{"name": "", "rows": 0, "digest": kp.stream_digest(
                np.zeros((0, 1)), np.zeros((0, 1)), [])}])
            port.stdin.close()
            self.assertEqual(port.wait(timeout=20), 0)
        finally:
            port.kill()
            port.wait()
            port.stdout.close()
            port.stderr.close()

    def test_bad_input_exits_2_with_a_message(self):
        for args, line, message in (((), "[1]\n", "breaks the protocol"), (("--bug", "nope"), "", "invalid choice")):
            port = self.start(*args)
            out, err = port.communicate(line, timeout=20)
            self.assertEqual((port.returncode, out), (2, ""))
            self.assertIn(message, err)


class HandlesTest(unittest.TestCase):
    """Handles count create and fork requests, refused forks included; the adapter sees its own ids."""

    class Named(kp.PagedAdapter):
        def __init__(self, config):
            super().__init__(config)
            self.live, self.made, self.seen = [], 0, []

        def create(self):
            self.made += 1
            self.live.append(f"s{self.made}")
            return self.live[-1]

        def fork(self, seq):
            self.seen.append(seq)
            if seq not in self.live:
                raise kp.IndexRefusal(f"no {seq}")
            return self.create()

        def release(self, seq):
            self.seen.append(seq)
            if seq not in self.live:
                raise kp.IndexRefusal(f"no {seq}")
            self.live.remove(seq)

        def append(self, seq, k, v):
            self.seen.append(seq)
            return [x for x in self.live if x != seq] if k.ndim == 2 else None

        keys = values = lambda self, seq: np.zeros((0, 1))
        block_table = lambda self, seq: []
        ref_counts = lambda self: {}
        free_blocks = bytes_in_use = lambda self: 0

    def test_mapping(self):
        port = kp.Port("p", [self.Named])
        ids = iter(range(1, 100))
        ask = lambda op, **f: port.handle(dict(f, id=next(ids), op=op, cache=1))  # noqa: E731
        ask("open", config={"kind": "paged", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1})
        adapter = port.caches[1].adapter
        ask("create")                                        # handle 0: s1
        self.assertEqual(ask("fork", seq=5)["error"], "index")  # handle 1: refused, used up
        self.assertTrue(ask("fork", seq=0)["ok"])            # handle 2: s2
        self.assertTrue(ask("release", seq=0)["ok"])
        self.assertEqual(ask("release", seq=0)["error"], "index")
        self.assertEqual(adapter.seen, [None, "s1", "s1", "s1"])
        answer = ask("observe")
        self.assertEqual([s["name"] for s in answer["streams"]], ["seq 2"])
        ask("create")                                        # handle 3: s3
        answer = ask("append", seq=3, k=tensor([1.0]), v=tensor([1.0]))
        self.assertEqual(answer["preempted"], [2])
        self.assertEqual([s["name"] for s in ask("observe")["streams"]], ["seq 3"])

    def test_an_id_the_cache_reissued_never_reaches_it_for_an_old_handle(self):
        class Reusing(self.Named):
            def create(self):
                self.live.append(min(set(range(9)) - set(self.live)))  # the lowest free slot, as slot allocators do
                return self.live[-1]
        port = kp.Port("p", [Reusing])
        ids = iter(range(1, 100))
        ask = lambda op, **f: port.handle(dict(f, id=next(ids), op=op, cache=1))  # noqa: E731
        ask("open", config={"kind": "paged", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1})
        ask("create")                                        # handle 0: slot 0
        ask("release", seq=0)
        self.assertEqual(ask("release", seq=0)["error"], "index")  # slot 0 is free: the cache sees 0 and refuses
        ask("create")                                        # handle 1: slot 0 again
        self.assertEqual(ask("release", seq=0)["error"], "index")  # handle 0 must not release handle 1's slot
        self.assertEqual(port.caches[1].adapter.seen, [0, 0, None])
        self.assertEqual([s["name"] for s in ask("observe")["streams"]], ["seq 1"])


if __name__ == "__main__":
    unittest.main()
