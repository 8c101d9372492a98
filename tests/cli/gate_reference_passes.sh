# The gate over the reference caches passes, and its JUnit XML and JSON are valid and complete.
source "$(dirname "$0")/lib.sh"
run 0 "$kvconform" gate --junit out.xml --json out.json
for p in exact_fill refused_append_unchanged copy_semantics views_filled_rows one_d_equals_one_row \
         order_preserved large_scores decode_within_bound seed_worked_example; do
  grep -qE "^flat +$p +PASS" out.txt || { cat out.txt >&2; fail "no PASS row for flat / $p"; }
done
contains out.txt "0 failed"
"$py" - <<'PY' || fail "reports are invalid"
import json, xml.etree.ElementTree as ET
suites = ET.parse("out.xml").getroot()
cases = {c.get("name"): c for c in suites.iter("testcase")}
assert len(cases) == 9 and not list(suites.iter("failure")), cases
for c in cases.values():
    props = {p.get("name"): p.get("value") for p in c.iter("property")}
    assert int(props["cases"]) >= 1, props
report = json.load(open("out.json"))
flat = [i for i in report["implementations"] if i["name"] == "flat"][0]
assert len(flat["properties"]) == 9
worst = max(p["worst_err_over_bound"] for p in flat["properties"])
assert all(p["status"] == "PASS" and p["cases"] >= 1 for p in flat["properties"])
assert 0 < worst < 0.1, worst
print("worst err/bound", worst)
PY
