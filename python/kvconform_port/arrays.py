"""Arrays of other libraries (torch, mlx, jax: DLPack or __array__) read as numpy arrays exactly, dtypes included."""
import ctypes
import math

import numpy as np

_CPU = 1  # DLPack's kDLCPU: the only device numpy can read
_BFLOAT = 4  # DLPack's kDLBfloat type code
_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
            11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu", 16: "hexagon"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # the head of DLPack's (unversioned) DLManagedTensor
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype, _capsule_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]


class ArrayConversionError(TypeError):
    """An array that cannot be read as numpy without changing a value, a dtype or a device."""


def _describe(x, device=None):
    kind = type(x)
    name = f"{kind.__module__}.{kind.__qualname__}".replace("builtins.", "")
    if device is None:
        device = getattr(x, "device", None)
    return f"{name} of dtype {getattr(x, 'dtype', '?')} on device {device if device is not None else '?'}"


def _refuse(x, why, device=None):
    return ArrayConversionError(f"cannot convert a {_describe(x, device)} to numpy exactly: {why}")


def _bfloat16(capsule):
    """A bfloat16 DLPack tensor as float32: each value's 16 bits are a float32's top half, so the widening is exact.
    The capsule is only read (never renamed), so its producer frees it as usual; None for any other dtype."""
    if not _capsule_valid(capsule, b"dltensor"):
        return None
    t = ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (_BFLOAT, 16, 1) or t.device.device_type != _CPU:
        return None
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:  # NULL strides: compact row-major
        strides = tuple(math.prod(shape[i + 1:]) for i in range(t.ndim))
    if math.prod(shape) == 0:
        bits = np.empty(shape, dtype=np.uint16)
    else:  # strides count elements and may be negative: map the span they reach, then view it with them
        low = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
        high = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
        span = (ctypes.c_uint16 * (high - low + 1)).from_address(t.data + t.byte_offset + 2 * low)
        flat = np.frombuffer(span, dtype=np.uint16)[-low:]
        bits = np.lib.stride_tricks.as_strided(flat, shape, [2 * s for s in strides]).copy()
    wide = bits.astype(np.uint32).ravel() << np.uint32(16)  # 1-D: a 0-d one would become a wider scalar
    return wide.view(np.float32).reshape(shape)


def _from_dlpack(x):
    device = None
    if hasattr(x, "__dlpack_device__"):
        device_type, device_id = x.__dlpack_device__()
        device = f"{_DEVICES.get(int(device_type), int(device_type))}:{device_id}"
        if int(device_type) != _CPU:
            raise _refuse(x, "numpy reads host memory only; copy it to the CPU first (torch: .cpu())", device)
    try:
        return np.from_dlpack(x)
    except Exception as e:  # noqa: BLE001 - a dtype numpy lacks, or a tensor its producer will not export
        first = e
    try:
        capsule = x.__dlpack__()
    except Exception:  # noqa: BLE001 - e.g. torch's bool tensors, or tensors that require grad
        capsule = None
    out = None if capsule is None else _bfloat16(capsule)
    if out is not None:
        return out
    if hasattr(x, "__array__"):  # the producer's own conversion, which refuses what it cannot do exactly
        try:
            return np.asarray(x)
        except Exception as e:  # noqa: BLE001
            raise _refuse(x, f"{first}; {e}", device) from e
    raise _refuse(x, str(first), device) from first


def to_numpy(x):
    """x as a numpy array of the same shape, values and dtype: numpy arrays as they are, DLPack exporters (torch,
    mlx, jax) through numpy.from_dlpack (sharing memory where it can), bfloat16 widened exactly to float32,
    __array__ exporters through it, and anything else (lists, scalars) as numpy.asarray reads it.
    ArrayConversionError (a TypeError) for what cannot be read exactly here, e.g. a tensor on a GPU."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x)
    if hasattr(x, "__array__"):
        try:
            return np.asarray(x)
        except Exception as e:  # noqa: BLE001
            raise _refuse(x, str(e)) from e
    return np.asarray(x)


def snapshot(x):
    """What an array holds, bit for bit (to see whether a call wrote into it); None if it cannot be read here."""
    try:
        a = to_numpy(x)
    except ArrayConversionError:
        return None
    return a.shape, a.dtype.str, a.tobytes()
