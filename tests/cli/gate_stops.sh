# The in-process gate stops early too: SIGINT at the next op boundary (exit 130, a partial matrix and reports), and
# a property past --deadline-s is a FAIL naming the deadline.
source "$(dirname "$0")/lib.sh"
"$kvconform" gate --profile deep --json r.json --junit r.xml >out.txt 2>err.txt &
harness=$!
sleep 2
kill -INT $harness
start=$SECONDS
wait $harness
got=$?
[ $got = 130 ] || { cat out.txt err.txt >&2; fail "exit $got after SIGINT, expected 130"; }
# 30 s: the deep gate runs for hours; finishing the op in flight and the workers' teardown took 12 s on a loaded
# 2-core machine.
[ $((SECONDS - start)) -le 30 ] || fail "took $((SECONDS - start)) s to stop"
contains out.txt "INTERRUPTED: interrupted by SIGINT; the matrix above is partial"
contains err.txt "interrupted by SIGINT; the results above are partial"
"$py" - <<'PY' || fail "reports"
import json, xml.etree.ElementTree as ET
r = json.load(open("r.json"))
assert r["partial"] and r["stopped"] == "interrupted by SIGINT", r
cells = [c for i in r["implementations"] for c in i["properties"]]
assert cells[-1]["status"] == "INTERRUPTED" and len(cells) < 40, cells[-1]
assert ET.parse("r.xml").getroot().get("errors") == "1"
PY
# One second per property is too little for the deep generation properties.
run 1 timeout 300 "$kvconform" gate --impl ring --profile deep --property 'ring_generation_slides' --deadline-s 1 \
  --store ""
contains out.txt "FAIL ring / ring_generation_slides: deadline: the property's deadline passed (--deadline-s) after"
