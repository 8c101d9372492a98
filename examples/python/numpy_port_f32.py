"""A kvconform port of a float32 flat cache that declares its profile (storage and arithmetic f32) in hello.

Usage: /usr/bin/python3 numpy_port_f32.py [--no-poison] [--no-digest]
"""
from kvconform_port import serve
from numpy_caches.flat import Flat32Cache

if __name__ == "__main__":
    serve("numpy-flat-f32", [Flat32Cache])
