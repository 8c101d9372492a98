# The in-process gate and selftest stop early too: SIGINT at the next op boundary (exit 130, a partial matrix and
# reports), and a property past --deadline-s is a FAIL naming the deadline.
source "$(dirname "$0")/lib.sh"
# Starts the command, sends SIGNAL (INT or TERM) two seconds later and expects exit CODE within 30 s: the deep
# gate runs for hours; finishing the op in flight and the workers' teardown took 12 s on a loaded 2-core machine.
stops_on() {
  local signal=$1 code=$2 start got
  shift 2
  "$@" >out.txt 2>err.txt &
  local harness=$!
  sleep 2
  kill -"$signal" $harness
  start=$SECONDS
  wait $harness
  got=$?
  [ $got = "$code" ] || { cat out.txt err.txt >&2; fail "$2: exit $got after SIG$signal, expected $code"; }
  [ $((SECONDS - start)) -le 30 ] || fail "$2 took $((SECONDS - start)) s to stop"
  contains err.txt "interrupted by SIG$signal; the results above are partial"
}
stops_on INT 130 "$kvconform" gate --profile deep --json r.json --junit r.xml
contains out.txt "INTERRUPTED: interrupted by SIGINT; the matrix above is partial"
"$py" - <<'PY' || fail "reports"
import json, xml.etree.ElementTree as ET
r = json.load(open("r.json"))
assert r["partial"] and r["stopped"] == "interrupted by SIGINT", r
cells = [c for i in r["implementations"] for c in i["properties"]]
assert cells[-1]["status"] == "INTERRUPTED" and len(cells) < 40, cells[-1]
assert ET.parse("r.xml").getroot().get("errors") == "1"
PY
stops_on TERM 143 "$kvconform" selftest --json z.json
"$py" -c 'import json; assert json.load(open("z.json"))["partial"] is True' || fail "selftest JSON not partial"
# One second per property is too little for the deep generation properties.
run 1 timeout 300 "$kvconform" gate --impl ring --profile deep --property 'ring_generation_slides' --deadline-s 1 \
  --store ""
contains out.txt "FAIL ring / ring_generation_slides: deadline: the property's deadline passed (--deadline-s) after"
