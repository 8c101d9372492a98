# The Python port passes the gate for flat and ring; with the seed's `>=` bug it fails with a minimal trace.
source "$(dirname "$0")/lib.sh"
port=$2/examples/python/kvconform_port.py
for kind in flat ring; do
  run 0 "$kvconform" port --kind "$kind" -- "${tracked[@]}" "$py" "$port"
  contains out.txt " 0 failed"
done
run 1 "$kvconform" port --kind flat --property exact_fill -- "${tracked[@]}" "$py" "$port" --bug strict-capacity
contains out.txt "FAIL port / exact_fill: outcome at append: refused (capacity)"
saved=$(ls kvconform-failures/port/exact_fill-*.json)
"$py" -c "import json,sys; t=json.load(open('$saved')); assert len(t['ops']) <= t['config']['capacity'] + 1, t" ||
  fail "not minimal: $saved"
run 1 "$kvconform" port --kind flat --replay "$saved" -- "${tracked[@]}" "$py" "$port" --bug strict-capacity
contains out.txt "FAIL $saved on port: outcome at append"
run 0 "$kvconform" port --kind flat --replay "$saved" -- "${tracked[@]}" "$py" "$port"
no_leftovers
