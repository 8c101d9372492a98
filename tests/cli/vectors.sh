# `kvconform vectors` output validates against its schema; the numpy caches pass it offline, their buggy twins fail.
source "$(dirname "$0")/lib.sh"
root=$2
run 0 "$kvconform" vectors --out vec --seed 3
"$py" - <<'PY' || fail "the vectors do not validate against their schema"
import glob, json, jsonschema
schema = json.load(open("vec/kvconform_vectors_schema_v1.json"))
jsonschema.Draft202012Validator.check_schema(schema)
files = sorted(glob.glob("vec/kvconform_*_test.json"))
assert len(files) >= 16, files
for f in files:
    v = json.load(open(f))
    jsonschema.Draft202012Validator(schema).validate(v)
    tests = [t for g in v["testGroups"] for t in g["tests"]]
    assert len(tests) == v["numberOfTests"], f
    flags = {x for t in tests for x in t["flags"]}
    classes = sum(x.startswith("InputClass_") for x in flags)
    # Every reference has a file (one per storage format, docs/numerics.md §6); the four f64 ones
    # carry the kill traces of the kinds' mutants.
    kind_file = f.split("_", 1)[1].rsplit("_", 1)[0] in ("flat", "ring", "paged", "beam")
    assert ("Mutant" in flags or not kind_file) and "Refusal" in flags and classes >= 15, (f, flags)
    print(f, len(tests), "tests valid")
PY
# The numpy caches pass every kind's vectors (full and digest observations); each seeded-bug twin fails, at least on
# the trace that kills the built-in mutant of its name.
run 0 "$py" "$root/examples/python/check_vectors.py" vec
contains out.txt "11 files: "
contains out.txt " 0 failed"
for bug in flat-strict-capacity flat-no-copy ring-bulk-evicts-sinks growing-doubles paged-fork-without-cow \
    prefix-hash-without-parent beam-reorder-aliases hybrid-global-layers-windowed tiered-failed-store-leaks-slot \
    recurrent-rollback-no-op radix-registers-before-write tiered-reuse-pending-source radix-lock-skips-matched-node; do
  run 1 "$py" "$root/examples/python/check_vectors.py" vec --bug "$bug"
  contains out.txt "(kills mutant $bug "
done
run 2 "$py" "$root/examples/python/check_vectors.py" vec --bug no-such-bug
run 0 "$kvconform" vectors --out only_flat --kind flat
[ -f only_flat/kvconform_flat_test.json ] && [ ! -f only_flat/kvconform_ring_test.json ] ||
  fail "--kind flat wrote other kinds"
