"""Numbers and tensors on the wire, bit-exact both ways (docs/port-protocol.md §2), and the errors of a bad request."""
import math

import numpy as np

MAX_RANK = 4
_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


class ProtocolError(Exception):
    """A request that breaks the protocol (not a refusal of the cache): the port stops with exit code 2."""


def integer(value, where):
    """A JSON integer (booleans are not integers here, although Python thinks they are)."""
    if type(value) is not int:
        raise ProtocolError(f"{where}: expected an integer, got {value!r}")
    return value


def integers(value, where):
    """A JSON array of integers, as a list."""
    if type(value) is not list:
        raise ProtocolError(f"{where}: expected an array of integers, got {value!r}")
    return [integer(x, f"{where}[{i}]") for i, x in enumerate(value)]


def _number(x, where):
    if type(x) is float or type(x) is int:
        return float(x)
    if type(x) is str and x in _NONFINITE:
        return _NONFINITE[x]
    raise ProtocolError(f'{where}: expected a number or "nan", "inf", "-inf", got {x!r}')


def array_from(tensor, where):
    """A tensor {"shape": [...], "data": [...]} as a float64 array of exactly that shape. Every
    value reads back to the double the harness wrote: JSON numbers are parsed by float(), which is
    correctly rounded, and the strings "nan", "inf", "-inf" are the non-finite values."""
    if type(tensor) is not dict or set(tensor) != {"shape", "data"}:
        raise ProtocolError(f'{where}: expected {{"shape": [...], "data": [...]}}, got {str(tensor)[:200]}')
    shape, data = tensor["shape"], tensor["data"]
    if type(shape) is not list or len(shape) > MAX_RANK or any(type(n) is not int or n < 0 for n in shape):
        raise ProtocolError(f"{where}.shape: expected at most {MAX_RANK} non-negative integers, got {shape!r}")
    if type(data) is not list:
        raise ProtocolError(f"{where}.data: expected an array of numbers")
    if len(data) != math.prod(shape):
        raise ProtocolError(f"{where}: {len(data)} values do not fill the shape {shape}")
    if not set(map(type, data)) <= {float}:  # the fast path is for the doubles the harness writes
        data = [_number(x, f"{where}.data[{i}]") for i, x in enumerate(data)]
    return np.array(data, dtype=np.float64).reshape(shape)


def numbers(a):
    """Any array as a flat list of JSON numbers: shortest round-trip decimals (Python's repr), -0.0
    kept, and "nan", "inf", "-inf" for the non-finite values, so the harness reads the same bits."""
    a = np.asarray(a, dtype=np.float64).ravel()
    if np.isfinite(a).all():
        return a.tolist()
    return [x if x == x and abs(x) != float("inf") else ("nan" if x != x else "inf" if x > 0 else "-inf")
            for x in a.tolist()]


def tensor(a):
    """Any array as a tensor of its own shape."""
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": numbers(a)}
