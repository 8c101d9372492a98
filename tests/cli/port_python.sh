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
# The clean end: every cache opened is closed, then the port's stdin, and the port exits by itself before any
# signal (the wrapper would be killed before writing "eof").
run 0 "$kvconform" port --kind ring --cases 5 --store "" -- \
  "${tracked[@]}" bash -c "tee -a requests.jsonl | '$py' '$port'; echo eof >>requests.jsonl"
"$py" - <<'PY' || fail "the port did not end cleanly"
import json
lines = open("requests.jsonl").read().splitlines()
assert lines[-1] == "eof", lines[-3:]
requests = [json.loads(l) for l in lines[:-1]]
opened = {r["cache"] for r in requests if r["op"] == "open"}
closed = {r["cache"] for r in requests if r["op"] == "close"}
assert opened and opened == closed, (len(opened), len(closed))
print(len(opened), "caches opened and closed, then end of input")
PY
no_leftovers
