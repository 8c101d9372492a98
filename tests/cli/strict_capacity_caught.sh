# The seed's `>=` capacity bug fails the gate with a shrunk trace that replay reproduces.
source "$(dirname "$0")/lib.sh"
run 1 "$kvconform" gate --impl flat-strict-capacity --property exact_fill
contains out.txt "FAIL flat-strict-capacity / exact_fill: outcome at append"
contains out.txt "replay: kvconform replay kvconform-failures/flat-strict-capacity/exact_fill-"
saved=$(ls kvconform-failures/flat-strict-capacity/exact_fill-*.json)
[ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
"$py" - "$saved" <<'PY' || fail "the saved trace is not a shrunk counterexample"
import json, sys
t = json.load(open(sys.argv[1]))
appends = [o for o in t["ops"] if o["op"] == "append"]
assert len(appends) <= t["config"]["capacity"] + 1, (len(appends), t["config"])
assert t["implementation"] == "flat-strict-capacity" and t["property"] == "exact_fill"
PY
run 1 "$kvconform" replay "$saved"
contains out.txt "FAIL $saved on flat-strict-capacity: outcome at append"
run 0 "$kvconform" replay --impl flat "$saved"
# The next gate replays the store first and reports the stored failure.
run 1 "$kvconform" gate --impl flat-strict-capacity --property exact_fill
contains err.txt "replayed stored $saved: still fails"
contains out.txt "a stored failure that still fails"
