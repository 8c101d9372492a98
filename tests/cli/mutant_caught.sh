# A mutant fails the gate on the property meant to kill it, with a shrunk trace that replay reproduces.
# Usage: mutant_caught.sh KVCONFORM IMPL PROPERTY MAX_OPS
source "$(dirname "$0")/lib.sh"
impl=$2 property=$3 max_ops=$4
run 1 "$kvconform" gate --impl "$impl" --property "$property"
contains out.txt "FAIL $impl / $property: "
contains out.txt "replay: $kvconform replay kvconform-failures/$impl/$property-"  # the runner that was run
saved=$(ls kvconform-failures/"$impl"/"$property"-*.json)
[ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
signature=$(grep -m1 "^FAIL $impl / $property: " out.txt | sed "s|^FAIL $impl / $property: ||; s|:.*||")
"$py" - "$saved" "$impl" "$property" "$max_ops" <<'PY' || fail "the saved trace is not a shrunk counterexample"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["implementation"] == sys.argv[2] and t["property"] == sys.argv[3], t
assert len(t["ops"]) <= int(sys.argv[4]), f'{len(t["ops"])} ops, expected at most {sys.argv[4]}'
print(len(t["ops"]), "ops:", [o["op"] for o in t["ops"]], t["config"])
PY
run 1 "$kvconform" replay "$saved"
contains out.txt "FAIL $saved on $impl: $signature:"
# The next gate replays the store first and reports the stored failure.
run 1 "$kvconform" gate --impl "$impl" --property "$property"
contains err.txt "replayed stored $saved: still fails"
contains out.txt "a stored failure that still fails"
