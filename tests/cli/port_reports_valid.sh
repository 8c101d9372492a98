# A port whose output is not UTF-8, or is UTF-8 cut in the middle of a character by the excerpt limits, still gives
# a full matrix, saved failures, and JSON, JUnit, HTML and store files that parse.
source "$(dirname "$0")/lib.sh"
# stderr: invalid bytes and 3000 bytes of multi-byte text (the 2000-byte tail starts inside a character);
# stdout: 199 bytes then a 3-byte character (the 200-byte excerpt ends inside it), then an invalid byte.
port=(bash -c 'euros=$(printf "\xe2\x82\xac%.0s" $(seq 1000))
               while read -r l; do printf "caf\xc3\xa9 %s \xff\xfe \x1b[31m end\xe2\x82\n" "$euros" >&2
                                   printf "%0199d\xe2\x82\xac \xff\n" 0; done')
run 1 "$kvconform" port --kind flat --json r.json --junit r.xml --html r.html -- "${tracked[@]}" "${port[@]}"
contains out.txt "not JSON: 0000"
contains out.txt "\\xff\\xfe \\x1b[31m end\\xe2\\x82"
contains out.txt "0 passed, 10 failed, 4 not supported"  # prefill and rollback need capabilities it never offered
"$py" - <<'PY' || fail "an output is not valid"
import glob, json, xml.etree.ElementTree as ET
open("out.txt", encoding="utf-8").read()  # the terminal too
r = json.load(open("r.json"))
cells = r["implementations"][0]["properties"]
statuses = sorted(c["status"] for c in cells)
assert statuses == ["FAIL"] * 10 + ["NOT SUPPORTED"] * 4, cells
assert not r["partial"]
ET.parse("r.xml")
page = open("r.html", encoding="utf-8").read()
assert "\\xff\\xfe \\x1b[31m end" in page and "\x1b" not in page, "the HTML report does not escape the port's bytes"
saved = glob.glob("kvconform-failures/port/*.json")
assert len(saved) >= 1, saved
for f in saved:
    t = json.load(open(f, encoding="utf-8"))
    assert "not JSON" in t["note"], t["note"]
print(len(cells), "cells,", len(saved), "saved traces: all valid")
PY
no_leftovers
