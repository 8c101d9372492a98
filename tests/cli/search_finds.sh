# The targeted numeric search finds what the random cases miss, and its failure is an ordinary one.
# Usage: search_finds.sh KVCONFORM IMPL (a mutant the quick random cases of decode_within_bound miss)
source "$(dirname "$0")/lib.sh"
impl=$2
run 0 "$kvconform" gate --impl "$impl" --property decode_within_bound --search 0 --store ""
contains out.txt "1 passed, 0 failed"
run 1 "$kvconform" gate --impl "$impl" --property decode_within_bound --json report.json --junit report.xml
contains out.txt "FAIL $impl / decode_within_bound: "
contains out.txt "(found by the targeted numeric search after 10 random cases)"
contains out.txt "replay: $kvconform replay kvconform-failures/$impl/decode_within_bound-"
contains report.xml 'name="search_cases"'
"$py" - "$impl" <<'PY' || fail "the JSON report lacks the search"
import json, sys
cell = json.load(open("report.json"))["implementations"][0]["properties"][0]
assert cell["status"] == "FAIL" and 10 < cell["cases"] <= 30 and cell["search"]["traces"] >= 1, cell
assert "random_worst_err_over_bound" in cell and "trace" in cell and "replay" in cell, cell
PY
saved=$(ls kvconform-failures/"$impl"/decode_within_bound-*.json)
run 1 "$kvconform" replay "$saved"
contains out.txt "FAIL $saved on $impl: "
run 0 "$kvconform" replay "$saved" --impl flat  # the reference passes the same trace
