# The self-test passes: every mutant killed on every seed, every variant within the bound.
source "$(dirname "$0")/lib.sh"
run 0 "$kvconform" selftest --profile quick --json zoo.json
contains out.txt " 0 failed"
"$py" - <<'PY' || fail "the kill matrix is incomplete"
import json
z = json.load(open("zoo.json"))
assert z["ok"] and len(z["mutants"]) >= 18 and len(z["variants"]) >= 6, z
assert all(m["killed"] == m["seeds"] and m["first_killer"] for m in z["mutants"])
assert z["median_cases_to_kill"] <= 10 and z["worst_cases_to_kill"] <= 100, z
assert all(v["passed"] and v["worst_err_over_bound"] <= 0.5 for v in z["variants"])
PY
