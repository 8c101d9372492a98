#!/usr/bin/env bash
# Timed script (not a ctest test): the replay of ring traces with a 4096-row window, with and without the metamorphic
# rewrite, must each take at most 2 s of CPU time (user + system: the wall time of an idle machine, whatever the load
# of this one; docs/reliability.md §6).
# Usage: tests/timing/ring_replay.sh KVCONFORM
set -u
kvconform=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" <<'PY'
import json, random, sys
random.seed(1)
w, d = 4096, 16
def rows(n): return {"shape": [n, d], "data": [random.uniform(-1, 1) for _ in range(n * d)]}
def row(): return {"shape": [d], "data": [random.uniform(-1, 1) for _ in range(d)]}
ops = [{"op": "append", "k": rows(w), "v": rows(w)}]
for i in range(w):
    ops.append({"op": "append", "k": row(), "v": row()})
    if i % 1024 == 1023: ops.append({"op": "decode", "q": row()})
for prop in ("ring_window_last_steps", "ring_bulk_equals_singles"):
    t = {"schema": "kvconform-trace", "version": 1, "implementation": "ring", "property": prop,
         "config": {"kind": "ring", "capacity": w, "d_k": d, "d_v": d}, "ops": ops}
    json.dump(t, open(f"{sys.argv[1]}/{prop}.json", "w"))
PY
status=0
for prop in ring_window_last_steps ring_bulk_equals_singles; do
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$kvconform" replay "$work/$prop.json" >"$work/out" 2>&1 ||
    { cat "$work/out"; status=1; }
  read -r wall user sys <"$work/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')
  echo "$prop: $cpu s CPU ($wall s wall): $(cut -c1-40 "$work/out")"
  awk -v t="$cpu" 'BEGIN {exit !(t > 2.0)}' && { echo "  more than 2 s"; status=1; }
done
exit $status
