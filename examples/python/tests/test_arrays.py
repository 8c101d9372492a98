"""Unit tests of arrays of other libraries: to_numpy's exact conversions and refusals, and torch caches behind a Port."""
import io
import json
import unittest
import warnings

import numpy as np

import kvconform_port as kp
from kvconform_port import codec
from kvconform_port.arrays import ArrayConversionError, to_numpy

try:
    import torch
except ImportError:  # the numpy tests still run
    torch = None

needs_torch = unittest.skipIf(torch is None, "torch is not importable (Debian: apt-get install python3-torch)")


def bits16(n, seed):
    """n random 16-bit patterns: every class of value (NaNs with payloads, infinities, subnormals, -0.0) turns up."""
    patterns = np.random.default_rng(seed).integers(0, 1 << 16, n, dtype=np.uint16)
    return np.concatenate([patterns, np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC1, 0x0001, 0x7C00, 0xFC00],
                                              dtype=np.uint16)])


class NumpyTest(unittest.TestCase):
    def test_numpy_arrays_are_returned_as_they_are(self):
        for a in (np.arange(6.0).reshape(2, 3), np.arange(6, dtype=np.float16)[::2], np.array(3, dtype=np.int8)):
            self.assertIs(to_numpy(a), a)

    def test_lists_and_scalars_as_numpy_reads_them(self):
        self.assertEqual(to_numpy([[1.0, 2.0]]).shape, (1, 2))
        self.assertEqual(to_numpy(2.5).shape, ())
        self.assertEqual(to_numpy([1, 2]).dtype, np.int64)

    def test_array_exporters_go_through_their_own_conversion(self):
        class Exporter:
            def __array__(self, dtype=None):
                return np.array([1.5, -0.0], dtype=np.float32)
        self.assertEqual(to_numpy(Exporter()).dtype, np.float32)

        class Broken:
            dtype = "float8"

            def __array__(self, dtype=None):
                raise TypeError("no such dtype in numpy")
        with self.assertRaisesRegex(ArrayConversionError, "Broken of dtype float8 .*no such dtype"):
            to_numpy(Broken())

    def test_a_device_numpy_cannot_read_is_refused_by_name(self):
        class OnGpu:
            dtype = "float32"

            def __dlpack__(self, stream=None):
                raise AssertionError("not called: the device is refused first")

            def __dlpack_device__(self):
                return 2, 1
        with self.assertRaises(ArrayConversionError) as caught:
            to_numpy(OnGpu())
        for part in ("OnGpu", "float32", "cuda:1", ".cpu()"):
            self.assertIn(part, str(caught.exception))


@needs_torch
class TorchConversionTest(unittest.TestCase):
    def same_bits(self, got, want):
        self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype))
        self.assertEqual(got.tobytes(), want.tobytes())

    def test_float_and_integer_dtypes_are_kept_bit_for_bit(self):
        raw = bits16(4096, 1)
        tensors = [torch.from_numpy(raw.view(np.float16).copy()),
                   torch.from_numpy(np.random.default_rng(2).integers(0, 1 << 32, 4096, dtype=np.uint32)
                                    .view(np.float32)),
                   torch.from_numpy(np.random.default_rng(3).integers(0, 1 << 63, 4096, dtype=np.uint64)
                                    .view(np.float64))]
        tensors += [torch.tensor([-128, -1, 0, 127], dtype=torch.int8), torch.tensor([0, 255], dtype=torch.uint8),
                    torch.tensor([-32768, 32767], dtype=torch.int16), torch.tensor([-(1 << 31), 7], dtype=torch.int32),
                    torch.tensor([-(1 << 63), (1 << 63) - 1], dtype=torch.int64)]
        for t in tensors:
            want = t.numpy().copy()
            self.same_bits(to_numpy(t.clone()), want)
        self.same_bits(to_numpy(torch.tensor([True, False])), np.array([True, False]))

    def test_bfloat16_widens_exactly_to_float32(self):
        raw = np.arange(1 << 16, dtype=np.uint16)  # every bfloat16
        t = torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16)
        got = to_numpy(t)
        self.assertEqual(got.dtype, np.float32)
        self.assertTrue(np.array_equal(got.view(np.uint32), raw.astype(np.uint32) << 16))  # the payloads too
        self.same_bits(got, t.float().numpy())

    def test_strided_non_contiguous_and_offset_tensors(self):
        base64 = torch.arange(60, dtype=torch.float64).reshape(3, 4, 5)
        base16 = torch.from_numpy(bits16(52, 5).view(np.int16).copy()).view(torch.bfloat16).reshape(3, 4, 5)
        for base in (base64, base64.to(torch.float16), base16):
            for view in (base.transpose(0, 2), base[:, ::2, 1::3], base[1:, 2:, 3:], base.permute(1, 2, 0)[::2],
                         base[2, :, 4], base[:, 1, :].t(), base[0, 0, :1].expand(6, 3)):
                want = (view.float() if view.dtype == torch.bfloat16 else view).contiguous().numpy()
                self.same_bits(np.ascontiguousarray(to_numpy(view)), want)
        shared = to_numpy(base64[:, ::2])
        self.assertTrue(np.shares_memory(shared, base64.numpy()))  # DLPack views, no copy

    def test_0_d_and_empty_tensors(self):
        for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64):
            scalar = to_numpy(torch.tensor(-1.5, dtype=dtype) if dtype != torch.int64 else torch.tensor(-3))
            self.assertEqual(scalar.shape, ())
            self.assertIsInstance(scalar, np.ndarray)
            for shape in ((0,), (0, 3), (2, 0, 4)):
                empty = to_numpy(torch.zeros(shape, dtype=dtype))
                self.assertEqual(empty.shape, shape)
        self.assertEqual(float(to_numpy(torch.tensor(-1.5, dtype=torch.bfloat16))), -1.5)
        self.assertEqual(to_numpy(torch.zeros(0, 3, dtype=torch.bfloat16)[:, ::2]).shape, (0, 2))

    def test_what_cannot_be_converted_exactly_is_refused(self):
        with self.assertRaisesRegex(ArrayConversionError, r"torch\.Tensor of dtype torch\.float32 on device cpu.*detach"):
            to_numpy(torch.zeros(2, requires_grad=True))
        with warnings.catch_warnings():  # torch calls its complex32 experimental
            warnings.simplefilter("ignore")
            half_complex = torch.zeros(2, dtype=torch.complex32)
        with self.assertRaisesRegex(ArrayConversionError, "torch.complex32"):
            to_numpy(half_complex)


def _tensor(*rows):
    return codec.tensor(np.array(rows, dtype=np.float64))


@needs_torch
class TorchPortTest(unittest.TestCase):
    """Torch caches behind a Port: tensors in through array_in, tensors out, and the copy-semantics checks."""

    def setUp(self):
        self.ids = iter(range(1, 1000))

    def ask(self, port, op, **fields):
        return port.handle(dict(fields, id=next(self.ids), op=op))

    def open_flat(self, port, capacity=4):
        return self.ask(port, "open", cache=1, config={"kind": "flat", "capacity": capacity, "d_k": 2, "d_v": 2})

    def test_torch_caches_answer_as_the_numpy_ones(self):
        from numpy_caches.flat import FlatCache
        from numpy_caches.paged import PagedCache
        from torch_port import TorchFlat, TorchPaged
        rng = np.random.default_rng(6)
        k, v, q = (codec.tensor(rng.normal(size=s)) for s in ((3, 2), (3, 2), (2,)))
        for mine, reference, config, seq in (
                (TorchFlat, FlatCache, {"kind": "flat", "capacity": 4, "d_k": 2, "d_v": 2}, {}),
                (TorchPaged, PagedCache, {"kind": "paged", "capacity": 4, "block_size": 2, "d_k": 2, "d_v": 2},
                 {"seq": 0})):
            answers = []
            for cls in (mine, reference):
                port = kp.Port("p", [cls])
                self.assertTrue(self.ask(port, "open", cache=1, config=config)["ok"])
                if seq:
                    self.ask(port, "create", cache=1)
                self.assertTrue(self.ask(port, "append", cache=1, k=k, v=v, **seq)["ok"])
                answers.append([{k: a[k] for k in a if k != "id"} for a in (
                    self.ask(port, "decode", cache=1, q=q, **seq), self.ask(port, "observe", cache=1),
                    self.ask(port, "observe", cache=1, digest=True))])
            self.assertEqual(answers[0], answers[1])
            self.assertIsInstance(port.caches[1].adapter.keys(*seq.values()), np.ndarray)

    def test_the_loop_serves_a_torch_cache(self):
        from torch_port import TorchFlat
        lines = ['{"id":1,"op":"open","cache":1,"config":{"kind":"flat","capacity":2,"d_k":1,"d_v":1}}',
                 '{"id":2,"op":"append","cache":1,"k":{"shape":[1],"data":[0.1]},"v":{"shape":[1],"data":["-inf"]}}',
                 '{"id":3,"op":"observe","cache":1}']
        out, err = io.StringIO(), io.StringIO()
        self.assertEqual(kp.run(kp.Port("p", [TorchFlat]), [x.encode() for x in lines], out, err), 0, err.getvalue())
        stream = json.loads(out.getvalue().splitlines()[-1])["streams"][0]
        self.assertEqual((stream["keys"]["data"], stream["values"]["data"]), ([0.1], ["-inf"]))

    def test_returned_tensors_of_other_dtypes_are_widened_exactly(self):
        class Bf16(kp.FlatAdapter):
            def keys(self):
                return torch.tensor([[1 + 2 ** -7, -0.0]], dtype=torch.bfloat16)

            def values(self):
                return torch.tensor([[65504.0, 2 ** -24]], dtype=torch.float16)

            def size(self):
                return 1
        port = kp.Port("p", [Bf16])
        self.open_flat(port)
        stream = self.ask(port, "observe", cache=1)["streams"][0]
        self.assertEqual((stream["keys"]["data"], stream["values"]["data"]), ([1 + 2 ** -7, -0.0], [65504.0, 2 ** -24]))
        self.assertEqual(str(stream["keys"]["data"][1]), "-0.0")

    def test_a_torch_cache_that_keeps_its_input_is_poisoned(self):
        class KeepsTorch(kp.FlatAdapter):
            array_in = torch.from_numpy

            def __init__(self, config):
                super().__init__(config)
                self.rows = []

            def append(self, k, v):
                self.given = type(k)
                self.rows.append((k.reshape(1, -1), v.reshape(1, -1)))  # views of the caller's memory

            def keys(self):
                return torch.cat([k for k, _ in self.rows])

            def values(self):
                return torch.cat([v for _, v in self.rows])

            def size(self):
                return len(self.rows)
        port = kp.Port("p", [KeepsTorch])
        self.open_flat(port)
        self.ask(port, "append", cache=1, k=_tensor(1.0, 2.0), v=_tensor(3.0, 4.0))
        self.assertIs(port.caches[1].adapter.given, torch.Tensor)
        self.assertEqual(self.ask(port, "observe", cache=1)["streams"][0]["keys"]["data"], ["nan", "nan"])
        kept = port.caches[1].adapter.keys().numpy()
        self.assertEqual(kept.view(np.uint64)[0, 0], np.float64(kp.POISON).view(np.uint64))
        unpoisoned = kp.Port("p", [KeepsTorch], poison=False)
        self.open_flat(unpoisoned)
        self.ask(unpoisoned, "append", cache=1, k=_tensor(1.0, 2.0), v=_tensor(3.0, 4.0))
        self.assertEqual(self.ask(unpoisoned, "observe", cache=1)["streams"][0]["keys"]["data"], [1.0, 2.0])

    def test_a_torch_cache_that_writes_into_its_input_is_caught(self):
        def to_torch_copy(a):  # a plain function as a class attribute: called with the array alone
            return torch.tensor(a)

        for convert in (torch.from_numpy, to_torch_copy):
            class Writes(kp.FlatAdapter):
                array_in = convert

                def append(self, k, v):
                    v.mul_(2)  # torch ignores numpy's read-only flag
                    if k.shape == (3,):
                        raise kp.ShapeRefusal("a refusal does not hide the write")

                def keys(self):
                    return torch.zeros(0, 2)

                values = keys

                def size(self):
                    return 0
            port = kp.Port("p", [Writes])
            self.open_flat(port)
            for k in (_tensor(1.0, 2.0), _tensor(1.0, 2.0, 3.0)):
                with self.assertRaisesRegex(ValueError, "append: the cache wrote into its input v, which is read-only"):
                    self.ask(port, "append", cache=1, k=k, v=_tensor(3.0, 4.0))
            unguarded = kp.Port("p", [Writes], poison=False)
            self.open_flat(unguarded)
            self.assertTrue(self.ask(unguarded, "append", cache=1, k=_tensor(1.0, 2.0), v=_tensor(3.0, 4.0))["ok"])

    def test_the_loop_reports_a_write_as_a_bug_of_the_cache(self):
        class Writes(kp.FlatAdapter):
            array_in = torch.from_numpy

            def append(self, k, v):
                k[0] = 9.0
        out, err = io.StringIO(), io.StringIO()
        lines = ['{"id":1,"op":"open","cache":1,"config":{"kind":"flat","capacity":2,"d_k":1,"d_v":1}}',
                 '{"id":2,"op":"append","cache":1,"k":{"shape":[1],"data":[1.0]},"v":{"shape":[1],"data":[1.0]}}']
        self.assertEqual(kp.run(kp.Port("p", [Writes]), [x.encode() for x in lines], out, err), 1)
        self.assertIn("ValueError: append: the cache wrote into its input k", err.getvalue())
        self.assertIn("the cache raised an exception answering line 2", err.getvalue())


if __name__ == "__main__":
    unittest.main()
