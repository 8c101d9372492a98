# The numpy port of one kind passes `kvconform port`; under a version 1 harness only the properties that need a
# capability a version 1 port cannot declare (sinks, preempt) may be NOT SUPPORTED.
# Usage: port_python.sh KVCONFORM ROOT KIND [CASES]
source "$(dirname "$0")/port_python_lib.sh"
kind=$3
cases=()
[ $# -ge 4 ] && cases=(--cases "$4")
run 0 "$kvconform" port --kind "$kind" "${cases[@]}" -- "${tracked[@]}" "$py" "$port"
contains out.txt " 0 failed"
if harness_v2; then
  contains out.txt " 0 not supported"
elif grep "^NOT SUPPORTED" out.txt | grep -v -e "ring_sinks_survive: needs capability \"sinks\"" \
    -e "paged_preemption: needs capability \"preempt\""; then
  fail "NOT SUPPORTED beyond what a version 1 port cannot declare"
fi
# The clean end: every cache opened is closed, then the port's stdin, and the port exits by itself before any
# signal (the wrapper would be killed before writing "eof").
run 0 "$kvconform" port --kind "$kind" --cases 3 --store "" -- \
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
