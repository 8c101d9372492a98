#!/usr/bin/env bash
# Seed corpora of the parser fuzz targets from the harness's own outputs: the traces the gate saves for the mutants
# (store entries, driver traces, the baselines of their runs), the Python port's answers, and RC_PARAMS strings.
# Files are named by content.
# Usage: make_parser_corpus.sh KVCONFORM [OUT_DIR]   (OUT_DIR defaults to fuzz/corpus)
set -euo pipefail
kvconform=$1
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/corpus}
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$kvconform" list >"$work/list.txt"
for impl in $(awk '/^  [a-z0-9-]+  \[/ {print $1}' "$work/list.txt"); do
  "$kvconform" gate --impl "$impl" --cases 20 --store "$work/store" --write-baseline "$work/baseline-$impl.csv" \
    >/dev/null 2>&1 || true
done
for kind in flat ring; do
  "$kvconform" port --kind "$kind" --cases 3 --store "" -- \
    bash -c "tee -a '$work/requests.jsonl' | '$py' '$here/../examples/python/numpy_port.py' |
             tee -a '$work/answers.jsonl'" >/dev/null 2>&1
done
"$py" - "$work" "$out" <<'PY'
import hashlib, json, os, pathlib, re, sys
work, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def seed(target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha256(data).hexdigest()[:16]).write_bytes(data)
# The order of implementations and of each kind's properties, as `list` prints them (the registry's order).
impls, props, kind = [], {}, None
for line in (work / "list.txt").read_text().splitlines():
    if m := re.match(r"^  ([a-z0-9-]+)  \[([a-z]+),", line): impls.append((m[1], m[2]))
    elif m := re.match(r"^([a-z]+) properties:$", line): kind = m[1]; props[kind] = []
    elif kind and (m := re.match(r"^  ([a-z_]+)$", line)): props[kind].append(m[1])
entries = sorted((work / "store").glob("*/*.json"))
for f in entries[:40]:
    t = json.loads(f.read_text())
    impl = [n for n, _ in impls].index(t["implementation"])
    prop = props[impls[impl][1]].index(t["property"])
    seed("store_entry_fuzzer", f.read_bytes() + bytes([prop, impl]))  # the provider reads its picks from the end
for f in entries:
    t = json.loads(f.read_text())
    if "drive" not in t: continue
    seed("driver_trace_fuzzer", f.read_bytes())
    for s in (0, 1, 2):  # the same drive on the reference, at other seeds and sizes
        t.update(implementation=t["config"]["kind"], drive={"seed": s, "size": 1 + s % t["config"].get("capacity", 1)})
        seed("driver_trace_fuzzer", json.dumps(t).encode())
ops = ["append", "decode", "create", "fork", "release", "update", "reorder", "prefill", "rollback"]  # trace.h's order
requests = (work / "requests.jsonl").read_text().splitlines()
answers = (work / "answers.jsonl").read_text().splitlines()
kept = {}
for req, ans in zip(requests, answers):
    op = json.loads(req)["op"]
    a = json.loads(ans)
    a["id"] = 1
    pick = ops.index(op) if op in ops else len(ops) if op == "observe" else len(ops) + 1
    kept.setdefault((pick, a["ok"], len(ans) // 200), bytes([pick]) + json.dumps(a).encode())
for data in list(kept.values())[:40]:
    seed("port_answer_fuzzer", data)
for text in ["", "seed=1", "seed=18446744073709551615 max_success=100 max_size=40", "max_success=1000 noshrink",
             "noshrink=0", "max_size=1", " seed=7\tmax_success=3 "]:
    seed("rc_params_fuzzer", text.encode())
for f in sorted(work.glob("baseline-*.csv"))[:30]:
    if f.read_text().count("\n") > 2: seed("baseline_fuzzer", f.read_bytes())  # a mutant's failures
for text in ["", "# comment only\n", "flat,exact_fill,a reason, with a comma\n",
             "\ufeff  flat-strict-capacity , exact_fill , x \r\nflat,copy_semantics,\r\n",
             "flat,exact_fill\n", "flat,exact_fill,a\nflat,exact_fill,b\n", "nope,exact_fill,x\n",
             "flat,ring_window_last_steps,x\n", ",,\n"]:
    seed("baseline_fuzzer", text.encode())
print({t: len(list((out / t).iterdir())) for t in
       ["store_entry_fuzzer", "driver_trace_fuzzer", "port_answer_fuzzer", "rc_params_fuzzer", "baseline_fuzzer"]})
PY
