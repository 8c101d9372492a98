"""Unit tests of the format caches (examples/python/format_caches): each codec's rounding, overflow, layout and
groups against values worked out by hand from docs/numerics.md §6, and each seeded bug's difference."""
import unittest

import numpy as np

from format_caches import elements, groups, kivi
from format_caches.caches import kinds, stored
from format_caches.latent import ValuesUnscaledLatent
from format_caches.sides import side


def round_trip(codec, rows):
    return codec.decode(codec.encode(np.asarray(rows, dtype=np.float64)))


class ElementTest(unittest.TestCase):
    def test_bf16_rounds_to_nearest_even_and_overflows_to_inf(self):
        ties = [[1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -30, 2.0 ** 128 * (1 - 2 ** -9), -0.0]]
        got = round_trip(elements.BF16(5), ties)
        np.testing.assert_array_equal(got, [[1.0, 1 + 2 ** -6, 1 + 2 ** -7, np.inf, -0.0]])
        self.assertTrue(np.signbit(got[0, 4]))
        self.assertEqual(elements.BF16(1).encode(np.array([[1.0]]))[0].dtype, np.uint16)
        self.assertEqual(round_trip(elements.TruncatingBF16(1), [[1 + 3 * 2 ** -8]])[0, 0], 1 + 2 ** -7)

    def test_e4m3_saturates_scaled_values_and_rounds_the_exact_quotient(self):
        codec = elements.E4M3Saturating(5, 2.0)
        got = round_trip(codec, [[1000.0, -np.inf, 2 * 2 ** -10, 2 * 3 * 2 ** -10, 2 * 17.0]])
        np.testing.assert_array_equal(got, [[896.0, -896.0, 0.0, 2 * 2 ** -8, 2 * 16.0]])
        self.assertTrue(np.isnan(round_trip(elements.UnsaturatedE4M3(1, 2.0), [[1000.0]])[0, 0]))
        # 17 / 16 is a tie (between 1 and 1.125), rounded to even; x / s below rounds to that tie in double,
        # but the exact quotient is above it (found by search), so it rounds up
        self.assertEqual(round_trip(elements.E4M3Saturating(1, 16.0), [[17.0]])[0, 0], 16.0)
        s, x = 1.569203504909749, 1.6672787239666085
        self.assertEqual(x / s, 1.0625)
        self.assertEqual(round_trip(elements.E4M3Saturating(1, s), [[x]])[0, 0], 1.125 * s)

    def test_e4m3_nan_keeps_its_sign(self):
        got = round_trip(elements.E4M3Saturating(2), [[np.nan, -np.nan]])
        self.assertTrue(np.isnan(got).all())
        self.assertEqual(list(np.signbit(got[0])), [False, True])


class GroupTest(unittest.TestCase):
    def test_q8_0_scale_is_amax_over_127_in_fp16(self):
        row = np.linspace(-1.0, 2.54, 40)[None]
        codec = groups.Q8_0(40)
        parts = codec.encode(row)
        scales, zeros = codec.groups(parts)
        self.assertIsNone(zeros)
        np.testing.assert_array_equal(scales, [np.float16(row[0, :32].__abs__().max() / 127), np.float16(2.54 / 127)])
        self.assertEqual(parts[0].dtype, np.int8)
        self.assertLessEqual(np.abs(codec.decode(parts) - row).max(), scales.max() / 2 + 1e-12)
        self.assertEqual(codec.row_bytes(), 40 + 2 * 2)
        bugged = groups.AmaxOver128Q8_0(40).groups(groups.AmaxOver128Q8_0(40).encode(row))[0]
        self.assertEqual(bugged[1], np.float16(2.54 / 128))

    def test_q4_1_packs_value_i_with_value_i_plus_16(self):
        row = np.arange(32.0)[None]  # scale (31 - 0) / 15, minimum 0: codes rise with the value
        codec = groups.Q4_1(32)
        packed, scale, minimum = codec.encode(row)
        self.assertEqual(packed.shape, (1, 1, 16))
        codes = np.rint(row[0] / float(scale[0, 0])).astype(int)
        self.assertEqual(int(packed[0, 0, 3]), codes[3] | codes[19] << 4)
        self.assertEqual(float(minimum[0, 0]), 0.0)
        swapped = groups.PairedNibblesQ4_1(32).decode((packed, scale, minimum))
        self.assertNotEqual(list(swapped[0]), list(codec.decode((packed, scale, minimum))[0]))

    def test_overflowing_scale_codes_zero(self):
        parts = groups.Q8_0(2).encode(np.array([[1e10, -1.0]]))
        self.assertTrue(np.isinf(groups.Q8_0(2).groups(parts)[0][0]))
        self.assertEqual(list(parts[0][0, 0, :2]), [0, 0])


class KiviTest(unittest.TestCase):
    def test_rows_wait_in_fp16_until_the_residual_fills(self):
        keys, values = side(kivi.ChannelKeys, 3, 1.0), side(kivi.TokenValues, 3, 1.0)
        rows = np.arange(24.0).reshape(8, 3) / 7
        keys.push(rows[:7]), values.push(rows[:7])
        np.testing.assert_array_equal(keys.rows(), rows[:7].astype(np.float16))
        self.assertEqual(keys.groups()[0].size, 0)
        keys.push(rows[7:]), values.push(rows[7:])
        self.assertEqual((keys.groups()[0].size, values.groups()[0].size), (2 * 3, 8 * 1))  # 2 groups x 3 channels
        lo = rows[:4].astype(np.float16).astype(np.float64).min(axis=0)
        np.testing.assert_array_equal(keys.groups()[1][:3], lo.astype(np.float16))
        never = side(kivi.NeverFlushedKeys, 3, 1.0)
        never.push(rows)
        self.assertEqual(never.groups()[0].size, 0)


class CachesTest(unittest.TestCase):
    def test_profiles_declare_the_codecs_formats(self):
        flat, paged = kinds(("flat", "paged"), kivi.ChannelKeys, kivi.TokenValues)
        self.assertEqual(flat.profile, {"keys": kivi.ChannelKeys.format, "values": kivi.TokenValues.format})
        self.assertTrue(flat.declares_groups())
        self.assertEqual(kinds(("ring",), elements.BF16)[0].profile, {"keys": "bf16", "values": "bf16"})

    def test_ring_keeps_sinks_and_the_last_rows(self):
        ring = kinds(("ring",), elements.BF16)[0]({"capacity": 3, "keep": 1, "d_k": 1, "d_v": 1, "k_scale": 1.0,
                                                 "v_scale": 1.0})
        ring.append(np.arange(5.0)[:, None], np.arange(5.0)[:, None])
        self.assertEqual((ring.positions(), ring.total(), ring.size()), ([0, 3, 4], 5, 3))
        self.assertEqual(list(ring.keys()[:, 0]), [0.0, 3.0, 4.0])

    def test_paged_bytes_count_the_declared_format(self):
        paged = kinds(("paged",), groups.Q8_0)[0]({"capacity": 2, "block_size": 2, "d_k": 33, "d_v": 1,
                                                   "preempt": False, "k_scale": 1.0, "v_scale": 1.0})
        sid = paged.create()
        paged.append(sid, np.ones((1, 33)), np.ones((1, 1)))
        self.assertEqual(paged.bytes_in_use(), 2 * ((33 + 2 * 2) + (1 + 2)))
        self.assertEqual(list(paged.key_scales(sid)), [np.float16(1 / 127)] * 2)

    def test_fp8_latent_rows_one_scale_and_the_unscaled_twin(self):
        config = {"capacity": 2, "block_size": 2, "d_k": 3, "d_v": 2, "k_scale": 0.5}
        cache, twin = kinds(("latent",), elements.E4M3Saturating)[0], stored(ValuesUnscaledLatent,
                                                                              elements.E4M3Saturating)
        self.assertEqual(cache.profile, {"keys": "e4m3 saturate scaled", "values": "e4m3 saturate scaled",
                                         "latent_path": "absorbed"})
        outputs = []
        for cls in (cache, twin):
            c = cls(config)
            s = c.create()
            c.append(s, np.array([[1.0, 3.0, 0.0], [1000.0, -1.0, 0.0]]))
            self.assertEqual(c.keys(s).tolist(), [[1.0, 3.0, 0.0], [224.0, -1.0, 0.0]])  # 448 x 0.5 saturated
            self.assertEqual(c.values(s).tolist(), [[1.0, 3.0], [224.0, -1.0]])
            self.assertEqual(c.bytes_in_use(), 2 * 3)  # one byte per entry, no value storage
            outputs.append(c.decode(s, np.zeros((1, 2)), np.zeros((1, 1, 2)), np.eye(2)[None])[0])
        self.assertEqual(outputs[0].tolist(), [[112.5, 1.0]])
        self.assertEqual(outputs[1].tolist(), [[225.0, 2.0]])  # averaged over the codes: the values / 0.5

    def test_q8_0_latent_value_groups_are_the_rows_first_groups(self):
        cls = kinds(("latent",), groups.Q8_0)[0]
        config = {"capacity": 2, "block_size": 2, "d_k": 34, "d_v": 32, "k_scale": 1.0}
        c = cls(config)
        self.assertFalse(c.supports(dict(config, d_k=35, d_v=33)))  # 33 values: no whole group
        s = c.create()
        c.append(s, np.concatenate([np.full((1, 32), 127.0), np.full((1, 2), 254.0)], axis=1))
        self.assertEqual(list(c.key_scales(s)), [1.0, 2.0])  # the latent group and the rotary one
        self.assertEqual(list(c.value_scales(s)), [1.0])
        self.assertEqual(c.values(s).tolist(), [[127.0] * 32])


if __name__ == "__main__":
    unittest.main()
