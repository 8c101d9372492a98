# A port that answers every request slowly but within the time limit is stopped by the property and run deadlines.
# Usage: port_deadlines.sh KVCONFORM SOURCE_DIR
source "$(dirname "$0")/lib.sh"
slow_port=("$py" "$(dirname "$0")/slow_port.py" "$2/examples/python" 0.25 -)  # well inside --timeout-ms 5000
start=$SECONDS
# 5 s, not 1 s: the port's start-up (Python and numpy) counts against its first answer and took over 1 s on a loaded
# machine; the property's and the run's deadlines, not the request's, are what this test is about.
run 1 timeout 120 "$kvconform" port --kind flat --timeout-ms 5000 --deadline-s 2 --run-deadline-s 5 --json r.json \
  --junit r.xml -- "${tracked[@]}" "${slow_port[@]}"
took=$((SECONDS - start))
[ $took -le 15 ] || fail "took $took s with a 5 s run deadline"
contains out.txt "FAIL port / exact_fill: deadline: the property's deadline passed (--deadline-s) after"
contains out.txt "INTERRUPTED: the run's deadline passed (--run-deadline-s); the matrix above is partial"
"$py" - <<'PY' || fail "reports"
import json, xml.etree.ElementTree as ET
r = json.load(open("r.json"))
assert r["partial"] and "run's deadline" in r["stopped"], r
cells = r["implementations"][0]["properties"]
assert 2 <= len(cells) < 10 and all(c["status"] == "FAIL" for c in cells), cells
ET.parse("r.xml")
PY
no_leftovers
