"""Checks the numpy caches offline against `kvconform vectors` files, through the port library's own request handling.

Usage: /usr/bin/python3 check_vectors.py DIR [--bug NAME] [--kind KIND ...]

Each test's ops go to kvconform_port.Port as protocol requests; after every op the answer (outcome,
refusal reason, preempted handles, decode and recurrent outputs within the published bound) and the full observation
(rows bit for bit, a recurrent state within its key bounds, positions, block tables up to renaming, counters) must
match the expected observation, and the digest observation must equal the digest of the expected rows (of the
streams whose rows are published exactly).
"""
import argparse
import json
import pathlib
import sys

import numpy as np

from kvconform_port import Port, stream_digest
from kvconform_port.codec import array_from
from numpy_port import BUGS, CACHES


def same_bits(got, want):
    return got.shape == want.shape and np.array_equal(got.view(np.uint64), want.view(np.uint64))


def decode_problem(answer, decodes):
    """The first decode number outside its bound, or None; problems are consecutive slices of the answer."""
    output, weights = array_from_list(answer.get("output")), array_from_list(answer.get("weights"))
    if output.size != sum(len(d["output"]) for d in decodes) or weights.size != sum(len(d["weights"]) for d in decodes):
        return f"decode gave {output.size} outputs and {weights.size} weights"
    at_o = at_w = 0
    for d in decodes:
        for name, got, at, want, bound in (("output", output, at_o, d["output"], d["output_bound"]),
                                           ("weights", weights, at_w, d["weights"], d["weight_bound"])):
            want, bound = array_from_list(want), array_from_list(bound)
            part = got[at:at + want.size]
            if d["numeric"] and not np.all(np.abs(part - want) <= bound):
                return f"{name} {part.tolist()} not within {bound.tolist()} of {want.tolist()}"
        at_o, at_w = at_o + len(d["output"]), at_w + len(d["weights"])
    return None


def array_from_list(values):
    return array_from({"shape": [len(values or [])], "data": values or []}, "numbers")


def state_problem(got, want):
    """The first difference of a full observation from the expected state, or None. Block numbers are
    compared up to a renaming within the observation (docs/port-protocol.md §7)."""
    renaming = {}
    if got["counters"] != want["counters"]:
        return f"counters {got['counters']}, expected {want['counters']}"
    names = [s["name"] for s in got["streams"]]
    if names != [s["name"] for s in want["streams"]]:
        return f"streams {names}, expected {[s['name'] for s in want['streams']]}"
    for g, w in zip(got["streams"], want["streams"]):
        for field in ("keys", "values"):
            mine, theirs = array_from(g[field], field), array_from(w[field], field)
            if field == "keys" and "key_bounds" in w:  # a recurrent state: computed, judged within its bound
                bound = np.asarray(w["key_bounds"], dtype=np.float64).reshape(theirs.shape)
                if mine.shape != theirs.shape or not np.all(np.abs(mine - theirs) <= bound):
                    return f"stream {g['name']!r}: keys {g[field]}, expected within {w['key_bounds']} of {w[field]}"
            elif not same_bits(mine, theirs):
                return f"stream {g['name']!r}: {field} {g[field]}, expected {w[field]}"
        if g.get("positions", []) != w.get("positions", []):
            return f"stream {g['name']!r}: positions {g.get('positions')}, expected {w.get('positions')}"
        blocks = g.get("blocks", [])
        if len(blocks) != len(w.get("blocks", [])):
            return f"stream {g['name']!r}: blocks {blocks}, expected {w.get('blocks')} up to renaming"
        for mine, theirs in zip(blocks, w.get("blocks", [])):
            if renaming.setdefault(("got", mine), theirs) != theirs or \
                    renaming.setdefault(("want", theirs), mine) != mine:
                return f"stream {g['name']!r}: blocks {blocks}, expected {w['blocks']} up to renaming"
    got_refs = {block: count for block, count in got.get("block_refs", [])}
    for block, count in want.get("block_refs", []):
        mine = renaming.get(("want", block))
        held = got_refs.pop(mine, 0)
        if held != count:
            return f"block {mine} has reference count {held}, expected {count} (tables holding it)"
    if got_refs:
        block = min(got_refs)
        return f"block {block} has reference count {got_refs[block]} but no table holds it (leaked)"
    return None


def digest_problem(got, want):
    for g, w in zip(got["streams"], want["streams"]):
        if "key_bounds" in w:  # no digest of the published bits can match a state computed within a bound
            continue
        keys, values = array_from(w["keys"], "keys"), array_from(w["values"], "values")
        expected = stream_digest(keys, values, w.get("positions", []))
        if g["digest"] != expected or g["rows"] != keys.shape[0]:
            return f"stream {g['name']!r}: digest {g['digest']} of {g['rows']} rows, expected {expected}"
    return None


def op_problem(answer, op, want):
    if answer["ok"] != (want["outcome"] == "accepted"):
        got = "accepted" if answer["ok"] else f"refused ({answer.get('error', '?')})"
        return f"{got}, expected {want['outcome']}"
    if not answer["ok"] and answer.get("error") not in want["reasons"]:
        return f"refused as {answer.get('error')}, expected {' or '.join(want['reasons'])}"
    if answer.get("preempted", []) != want.get("preempted", []):
        return f"preempted {answer.get('preempted', [])}, expected {want.get('preempted', [])}"
    if "outputs" in want:  # a recurrent append's outputs, each within its bound
        output = array_from_list(answer.get("output"))
        expected, bound = (array_from_list(want["outputs"][k]) for k in ("output", "output_bound"))
        if output.shape != expected.shape or not np.all(np.abs(output - expected) <= bound):
            return f"outputs {output.tolist()} not within {bound.tolist()} of {expected.tolist()}"
    return decode_problem(answer, want["decode"]) if "decode" in want else None


def check(test, config, adapters):
    """The first difference from the expected observations, or None."""
    port = Port("check_vectors", adapters)
    ids = iter(range(1, 1 << 30))
    port.handle({"id": next(ids), "op": "open", "cache": 1, "config": config})
    for op, want in zip(test["ops"], test["expected"]):
        where = f'op {want["op"]} ({op["op"]})'
        problem = op_problem(port.handle(dict(op, id=next(ids), cache=1)), op, want)
        full = port.handle({"id": next(ids), "op": "observe", "cache": 1})
        problem = problem or state_problem(full, want["state"])
        problem = problem or digest_problem(port.handle({"id": next(ids), "op": "observe", "cache": 1, "digest": True}),
                                            want["state"])
        if problem:
            return f"{where}: {problem}"
    return None


def main():
    parser = argparse.ArgumentParser(description="Checks the numpy caches against kvconform vectors files.")
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--bug", choices=sorted(BUGS), help="check a seeded-bug twin instead of its correct cache")
    parser.add_argument("--kind", action="append", help="only this kind (repeatable; default: every file found)")
    args = parser.parse_args()
    adapters = [BUGS[args.bug] if args.bug and c.kind == BUGS[args.bug].kind else c for c in CACHES]
    kinds = args.kind or [c.kind for c in CACHES]
    files = [(kind, args.folder / f"kvconform_{kind}_test.json") for kind in kinds]
    files = [(kind, f) for kind, f in files if f.exists()]
    if not files:
        parser.error(f"no kvconform_KIND_test.json files in {args.folder} for kinds {', '.join(kinds)}")
    passed = failed = 0
    for kind, path in files:
        for group in json.loads(path.read_text())["testGroups"]:
            for test in group["tests"]:
                problem = check(test, group["config"], adapters)
                if problem:
                    failed += 1
                    print(f"FAIL {kind} tcId {test['tcId']} ({test['comment']}): {problem}")
                else:
                    passed += 1
    print(f"{len(files)} files: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
