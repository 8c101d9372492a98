# A seeded-bug twin of a numpy port fails the property meant to catch it with a shrunk trace of at most MAX_OPS ops,
# which replays as a failure on the twin and passes on the correct port. A property a version 1 harness reports NOT
# SUPPORTED (it needs a capability only hello declares) is checked instead by replaying the trace with which
# `kvconform vectors` kills the built-in mutant of the same name.
# Usage: port_python_bug.sh KVCONFORM ROOT KIND BUG PROPERTY MAX_OPS
source "$(dirname "$0")/port_python_lib.sh"
kind=$3 bug=$4 property=$5 max_ops=$6
"$kvconform" port --kind "$kind" --property "$property" -- "${tracked[@]}" "$py" "$port" --bug "$bug" >out.txt 2>err.txt
status=$?
if [ "$status" = 0 ] && ! harness_v2 && grep -q "^NOT SUPPORTED port / $property" out.txt; then
  echo "$property needs protocol version 2: replaying the vectors' trace that kills $bug instead"
  run 0 "$kvconform" vectors --out vec --kind "$kind"
  "$py" - "vec/kvconform_${kind}_test.json" "$bug" saved.json <<'PY' || fail "no vectors test kills $bug"
import json, sys
for group in json.load(open(sys.argv[1]))["testGroups"]:
    for test in group["tests"]:
        if test["comment"].startswith(f"kills mutant {sys.argv[2]} "):
            trace = {"schema": "kvconform-trace", "version": 1, "config": group["config"], "ops": test["ops"]}
            json.dump(trace, open(sys.argv[3], "w"))
            sys.exit(0)
sys.exit(1)
PY
  saved=saved.json
else
  [ "$status" = 1 ] || { cat out.txt err.txt >&2; fail "exit $status, expected 1"; }
  contains out.txt "FAIL port / $property: "
  saved=$(ls kvconform-failures/port/"$property"-*.json)
  [ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
fi
check_ops "$saved" "$max_ops"
run 1 "$kvconform" port --kind "$kind" --replay "$saved" -- "${tracked[@]}" "$py" "$port" --bug "$bug"
contains out.txt "FAIL $saved on port: "
run 0 "$kvconform" port --kind "$kind" --replay "$saved" -- "${tracked[@]}" "$py" "$port"
no_leftovers
