# --shard I/N and GoogleTest's GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS split the gate: the shards' union
# is the whole matrix with no cell twice; a malformed shard is a usage error. --kind keeps one kind.
source "$(dirname "$0")/lib.sh"
# The whole matrix, each cell with a few cases: a shard's cells and their results (cases, worst ratio) must be the
# whole gate's, which few cases show as well as a hundred.
few=(--cases 5 --search 2)
run 0 "$kvconform" gate "${few[@]}" --json all.json
for i in 0 1 2; do run 0 "$kvconform" gate "${few[@]}" --shard "$i/3" --json "s$i.json"; done
GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=1 GTEST_SHARD_STATUS_FILE="$PWD/status" run 0 "$kvconform" gate "${few[@]}" \
  --json env.json
[ -f status ] || fail "GTEST_SHARD_STATUS_FILE was not created"
"$py" - <<'PY' || fail "the shards do not partition the matrix"
import json
def cells(path):
    return [(i["name"], p["name"], p["status"], p["cases"], p["worst_err_over_bound"])
            for i in json.load(open(path))["implementations"] for p in i["properties"]]
whole = cells("all.json")
parts = [cells(f"s{i}.json") for i in range(3)]
assert len(whole) > 3 and sorted(sum(parts, [])) == sorted(whole), (len(whole), [len(p) for p in parts])
assert all(abs(len(p) - len(whole) / 3) < 1 for p in parts), [len(p) for p in parts]
assert cells("env.json") == parts[1]
PY
for bad in 3/3 1/0 x/2 -1/2 1 2/3/4; do
  run 2 "$kvconform" gate --shard "$bad"
  contains err.txt "--shard"
done
GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=2 run 2 "$kvconform" gate
contains err.txt "GTEST_SHARD_INDEX"
run 0 "$kvconform" gate --kind paged --impl ring --impl paged
contains out.txt "19 passed, 0 failed, 0 not supported"
grep -q "^ring " out.txt && fail "--kind paged ran a ring implementation"
run 2 "$kvconform" gate --kind paged --impl ring
contains err.txt "--kind paged"
