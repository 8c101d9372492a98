"""A kvconform port: serves the numpy caches of kv_caches.py over the line protocol (docs/port-protocol.md).

Usage: /usr/bin/python3 kvconform_port.py [--bug strict-capacity]
"""
import json
import math
import sys

import numpy as np

from kv_caches import CacheFull, EmptyCache, FlatKVCache, RingKVCache, ShapeError


def number(x):
    """A float as the trace format writes it: repr digits, or "nan" / "inf" / "-inf"."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def array(t):
    """A tensor {"shape": [...], "data": [...]} as a numpy array; float() also reads "nan", "inf", "-inf"."""
    return np.array([float(x) for x in t["data"]], dtype=np.float64).reshape(t["shape"])


def tensor(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [number(x) for x in a.ravel()]}


class Port:
    """Open caches by id; every request names the cache it is for."""

    def __init__(self, bug):
        self.bug = bug
        self.caches = {}

    def open(self, req):
        c = req["config"]
        if c["kind"] == "flat":
            cache = FlatKVCache(c["capacity"], c["d_k"], c["d_v"], strict_capacity_bug=self.bug == "strict-capacity")
        elif c["kind"] == "ring":
            cache = RingKVCache(c["capacity"], c["d_k"], c["d_v"])
        else:
            raise NotImplementedError(f"kind {c['kind']}")
        self.caches[req["cache"]] = cache
        return {}

    def close(self, req):
        self.caches.pop(req["cache"], None)
        return {}

    def append(self, req):
        self.caches[req["cache"]].append(array(req["k"]), array(req["v"]))
        return {}

    def decode(self, req):
        output, weights = self.caches[req["cache"]].decode_step(array(req["q"]))
        return {"output": [number(x) for x in output], "weights": [number(x) for x in weights]}

    def observe(self, req):
        cache = self.caches[req["cache"]]
        keys, values = cache.keys(), cache.values()
        stream = {"name": "", "keys": tensor(keys), "values": tensor(values)}
        counters = {"size": int(keys.shape[0])}
        if isinstance(cache, RingKVCache):
            stream["positions"] = cache.positions()
            counters["total"] = cache.total
        return {"streams": [stream], "counters": counters}


ERRORS = {CacheFull: "capacity", ShapeError: "shape", EmptyCache: "empty"}


def main():
    bug = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--bug" else None
    port = Port(bug)
    for line in sys.stdin:
        req = json.loads(line)
        answer = {"id": req["id"], "ok": True}
        try:
            answer.update(getattr(port, req["op"])(req))
        except tuple(ERRORS) as e:
            answer.update(ok=False, error=ERRORS[type(e)], message=str(e))
        except ValueError as e:  # e.g. a reshape that does not fit: a shape error of the request
            answer.update(ok=False, error="shape", message=str(e))
        sys.stdout.write(json.dumps(answer, allow_nan=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
