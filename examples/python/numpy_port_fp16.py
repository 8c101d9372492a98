"""A kvconform port of flat, ring and growing numpy caches that store fp16 with IEEE conversion (overflow to ±inf)
and decode in float32, declaring {"keys": "fp16", "values": "fp16", "working": "f32"} in hello; `--bug NAME` serves
a twin that mishandles the infinities.

Usage: /usr/bin/python3 numpy_port_fp16.py [--bug NAME] [--no-poison] [--no-digest]
"""
from kvconform_port import serve
from numpy_caches import fp16

BUGS = {"fp16-zeros-for-infinities": fp16.ZerosForInfinitiesFp16, "fp16-finite-for-nan": fp16.FiniteForNaNFp16}

if __name__ == "__main__":
    serve("numpy-fp16", [fp16.Fp16Flat, fp16.Fp16Ring, fp16.Fp16Growing], BUGS)
