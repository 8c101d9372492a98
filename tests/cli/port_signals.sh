# SIGTERM or SIGINT to the harness: it stops at the next op boundary, keeps the failures found, prints and writes a
# partial matrix, ends the port's group and exits 128 + the signal; a second signal ends it at once.
# Usage: port_signals.sh KVCONFORM SOURCE_DIR TERM|INT|twice
source "$(dirname "$0")/lib.sh"
slow_port=("$py" "$(dirname "$0")/slow_port.py" "$2/examples/python" 0.05 requests.log --bug flat-strict-capacity)
# exact_fill fails at once with this bug and is saved; the slower properties after it are then cut short.
"$kvconform" port --kind flat --json r.json --junit r.xml -- "${tracked[@]}" "${slow_port[@]}" >out.txt 2>err.txt &
harness=$!
for _ in $(seq 100); do grep -q "port / exact_fill: FAIL" err.txt && break; sleep 0.1; done
contains err.txt "port / exact_fill: FAIL"
sleep 1
case $3 in
  TERM) kill -TERM $harness; want=143 ;;
  INT) kill -INT $harness; want=130 ;;
  twice) kill -TERM $harness; sleep 0.2; kill -TERM $harness; want=143 ;;
esac
start=$SECONDS
wait $harness
got=$?
[ "$got" = "$want" ] || { cat out.txt err.txt >&2; fail "exit $got, expected $want"; }
[ $((SECONDS - start)) -le 10 ] || fail "took $((SECONDS - start)) s to stop"
ls kvconform-failures/port/exact_fill-*.json >/dev/null || fail "the failure found before the signal was not kept"
if [ "$3" != twice ]; then
  contains out.txt "FAIL port / exact_fill: outcome at append"
  contains out.txt "INTERRUPTED: interrupted by SIG$3; the matrix above is partial"
  "$py" - <<'PY' || fail "reports"
import json, xml.etree.ElementTree as ET
r = json.load(open("r.json"))
assert r["partial"] and r["stopped"].startswith("interrupted by SIG"), r
cells = r["implementations"][0]["properties"]
assert cells[0]["name"] == "exact_fill" and cells[0]["status"] == "FAIL", cells[0]
assert len(cells) < 10, "the run went on after the signal"
# The cell the signal landed in: INTERRUPTED, or FAIL when it had found its failure first (kept and saved).
assert cells[-1]["status"] in ("INTERRUPTED", "FAIL"), cells[-1]
assert all("trace" in c for c in cells if c["status"] == "FAIL"), "a failure found was not saved"
interrupted = sum(c["status"] == "INTERRUPTED" for c in cells)
assert ET.parse("r.xml").getroot().get("errors") == str(interrupted)
# The clean end after the signal: the open caches closed, then end of input, before any signal to the port.
lines = open("requests.log").read().splitlines()
assert lines[-1] == "eof", lines[-3:]
requests = [json.loads(l) for l in lines[:-1]]
opened = {r["cache"] for r in requests if r["op"] == "open"}
closed = {r["cache"] for r in requests if r["op"] == "close"}
assert opened == closed, sorted(opened - closed)
PY
fi
no_leftovers
