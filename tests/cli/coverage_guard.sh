# Coverage statistics and their guard: gate --stats shows every beam event with the required ones hit, and a
# quick run in which a generator no longer makes a required event (the test-only hook turns the mask shapes that
# leave holes into left padding) fails with the event's name and how to see the statistics again; fewer cases or
# a part of the row are not guarded.
source "$(dirname "$0")/lib.sh"
run 0 "$kvconform" gate --impl beam --stats --json ok.json
contains out.txt "coverage of beam:"
for e in "reorder 3-cycle" "reorder at B=8: 3-cycle" "reorder at B=2: repeated beam" "mask hole" "single live key" \
  "fully masked row" "class cancellation" "prefill with GQA group > 1" "prefill with a masked position"; do
  grep -qE "^[* ] $e +[1-9][0-9]*/1800 " out.txt || { cat out.txt >&2; fail "no traces hit \"$e\""; }
done
grep -q "MISSING" out.txt && fail "a required event is missing on the default seed"
"$py" - <<'PY' || fail "the JSON report lacks the coverage"
import json
impl = json.load(open("ok.json"))["implementations"][0]
cov = impl["coverage"]
assert cov["guarded"] and cov["missing"] == [] and cov["traces"] == 1800, cov
events = {e["name"]: e for e in cov["events"]}
assert events["reorder 3-cycle"]["required"] and events["reorder 3-cycle"]["traces"] > 0
assert all(e["traces"] > 0 for e in cov["events"] if e["required"] and e["applies"])
cells = {p["name"]: p["coverage"] for p in impl["properties"]}
assert cells["beam_reorder_gathers"]["traces"] == 100 and cells["beam_reorder_gathers"]["events"]["reorder 3-cycle"] > 0
PY

export KVCONFORM_TEST_DISABLE_GENERATOR=beam-mask-holes
run 1 "$kvconform" gate --impl beam --stats --json gap.json --junit gap.xml
contains out.txt "18 passed, 0 failed, 0 not supported, 1 required event missed"
contains out.txt 'COVERAGE beam: the required event "mask hole" never occurred in the 1800 traces of its 18 properties'
contains out.txt "replay: $kvconform gate --impl beam --seed 1 --stats"
"$py" - <<'PY' || fail "the reports do not name the missing event"
import json, xml.etree.ElementTree as ET
cov = json.load(open("gap.json"))["implementations"][0]["coverage"]
assert cov["missing"] == ["mask hole"], cov["missing"]
cases = [c for c in ET.parse("gap.xml").getroot().iter("testcase") if c.get("name") == "coverage"]
assert len(cases) == 1 and "mask hole" in cases[0].find("failure").get("message")
PY
grep -qE "^\* mask hole +0/1800 .*MISSING" out.txt || { cat out.txt >&2; fail "--stats does not mark the gap"; }
# Not guarded: fewer cases than the quick profile's, or a part of the row.
run 0 "$kvconform" gate --impl beam --cases 50
run 0 "$kvconform" gate --impl beam --property 'beam_*'
