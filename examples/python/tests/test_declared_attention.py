"""Declared attention through the library (docs/numerics.md §7): a profile with learned sinks gives decode and prefill
their `sinks` argument, exactly once and only then; the gpt-oss-style numpy caches attend with the sink as a value-less
term of the normaliser, and their twins as a bias on key 0."""
import unittest

import numpy as np

from kvconform_port import FlatAdapter, HybridAdapter, PagedAdapter, RingAdapter, ShapeRefusal
from numpy_caches import gpt_oss
from numpy_caches.flat import FlatCache


class SinksArgument(unittest.TestCase):
    def test_learned_sinks_add_the_argument_to_decode_and_prefill(self):
        class Declared(FlatAdapter):
            profile = {"attention": {"sinks": "learned", "window": "sliding 4"}}

        class Again(Declared):  # a subclass of a declaring class keeps one sinks argument
            pass

        for cls in (Declared, Again):
            self.assertEqual(cls.ops["decode"], (("q", "sinks"), ()))
            self.assertEqual(cls.ops["prefill"], (("k", "v", "q", "sinks"), ()))
            self.assertEqual(cls.ops["append"], FlatAdapter.ops["append"])
        self.assertEqual(gpt_oss.GptOssHybrid.ops["prefill"], (HybridAdapter.ops["prefill"][0] + ("sinks",), ()))

    def test_every_kind_serving_sinks_takes_the_argument(self):
        # Ring, paged and hybrid serve learned sinks too (docs/numerics.md §7): `sinks` after their own arguments.
        for base in (RingAdapter, PagedAdapter, HybridAdapter):
            declared = type("Declared", (base,), {"profile": {"attention": {"sinks": "learned"}}})
            for op in ("decode", "prefill"):
                self.assertEqual(declared.ops[op], (base.ops[op][0] + ("sinks",), base.ops[op][1]), base.__name__)

    def test_plain_and_capped_caches_keep_their_arguments(self):
        class Capped(FlatAdapter):
            profile = {"attention": {"softcap": 30}}

        self.assertEqual(Capped.ops, FlatAdapter.ops)
        self.assertEqual(FlatCache.ops, FlatAdapter.ops)


class GptOssAttention(unittest.TestCase):
    def setUp(self):
        self.cache = gpt_oss.SinksSlidingFlat({"capacity": 12, "d_k": 2, "d_v": 1, "k_scale": 1.0, "v_scale": 1.0})
        self.cache.append(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0], [3.0]]))

    def test_the_sink_joins_the_normaliser_with_no_value(self):
        out, w = self.cache.decode(np.array([0.0, 0.0]), np.array([0.0]))
        np.testing.assert_allclose(w, [1 / 3, 1 / 3])  # e^0 for each key and for the sink
        np.testing.assert_allclose(out, [4 / 3])

    def test_the_twin_biases_key_0_instead(self):
        twin = gpt_oss.SinkKey0BiasFlat(self.cache.config)
        twin.append(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0], [3.0]]))
        _, w = twin.decode(np.array([0.0, 0.0]), np.array([np.log(3.0)]))
        np.testing.assert_allclose(w, [0.75, 0.25])

    def test_the_window_leaves_out_rows_before_it(self):
        self.cache.append(np.ones((8, 2)), np.zeros((8, 1)))
        _, w = self.cache.decode(np.array([0.0, 0.0]), np.array([-50.0]))
        np.testing.assert_allclose(w[:2], [0, 0])
        np.testing.assert_allclose(w[2:], np.full(8, 1 / 8))

    def test_a_sinks_array_of_another_shape_is_refused(self):
        for sinks in (np.array([0.0, 1.0]), np.array([[0.0]]), np.zeros(0)):
            with self.assertRaises(ShapeRefusal):
                self.cache.decode(np.array([0.0, 0.0]), sinks)


if __name__ == "__main__":
    unittest.main()
