"""Checks the numpy caches of kv_caches.py offline against `kvconform vectors` files.

Usage: /usr/bin/python3 check_vectors.py DIR [--bug strict-capacity]
"""
import json
import pathlib
import sys

import numpy as np

from kv_caches import CacheFull, EmptyCache, FlatKVCache, RingKVCache, ShapeError

REASONS = {CacheFull: "capacity", ShapeError: "shape", EmptyCache: "empty"}


def array(t):
    return np.array([float(x) for x in t["data"]], dtype=np.float64).reshape(t["shape"])


def make(config, bug):
    if config["kind"] == "flat":
        return FlatKVCache(config["capacity"], config["d_k"], config["d_v"],
                           strict_capacity_bug=bug == "strict-capacity")
    return RingKVCache(config["capacity"], config["d_k"], config["d_v"], config.get("keep", 0))


def run_op(cache, op):
    """Returns (outcome, reason, decode result or None)."""
    try:
        if op["op"] == "append":
            cache.append(array(op["k"]), array(op["v"]))
            return "accepted", None, None
        return "accepted", None, cache.decode_step(array(op["q"]))
    except tuple(REASONS) as e:
        return "refused", REASONS[type(e)], None
    except ValueError:  # a reshape that does not fit is a shape refusal
        return "refused", "shape", None


def same_bits(got, want):
    return got.shape == want.shape and np.array_equal(got.view(np.uint64), want.astype(np.float64).view(np.uint64))


def check(test, config, bug):
    """The first difference from the expected observations, or None."""
    cache = make(config, bug)
    for op, want in zip(test["ops"], test["expected"]):
        where = f'op {want["op"]} ({op["op"]})'
        outcome, reason, result = run_op(cache, op)
        if outcome != want["outcome"]:
            return f"{where}: {outcome}, expected {want['outcome']}"
        if reason and reason not in want["reasons"]:
            return f"{where}: refused as {reason}, expected {want['reasons']}"
        if result is not None:
            output, weights = result
            d = want["decode"][0]
            if not d["numeric"]:
                continue  # outside the numeric domain only the outcome is judged
            for name, got, exp, bound in (("output", output, d["output"], d["output_bound"]),
                                          ("weights", weights, d["weights"], d["weight_bound"])):
                exp, bound = np.array(exp, dtype=np.float64), np.array(bound, dtype=np.float64)
                if got.shape != exp.shape or not np.all(np.abs(got - exp) <= bound):
                    return f"{where}: {name} {got.tolist()} not within {bound.tolist()} of {exp.tolist()}"
        stream = want["state"]["streams"][0]
        if not same_bits(cache.keys(), array(stream["keys"])) or not same_bits(cache.values(), array(stream["values"])):
            return f"{where}: stored rows differ"
        if "positions" in stream and cache.positions() != stream["positions"]:
            return f"{where}: positions {cache.positions()}, expected {stream['positions']}"
    return None


def main():
    folder = pathlib.Path(sys.argv[1])
    bug = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--bug" else None
    passed = failed = 0
    for kind in ("flat", "ring"):
        vectors = json.loads((folder / f"kvconform_{kind}_test.json").read_text())
        for group in vectors["testGroups"]:
            for test in group["tests"]:
                problem = check(test, group["config"], bug)
                if problem:
                    failed += 1
                    print(f"FAIL {kind} tcId {test['tcId']} ({test['comment']}): {problem}")
                else:
                    passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
