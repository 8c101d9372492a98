# The gate over the reference caches passes, and its JUnit XML and JSON are valid and complete.
source "$(dirname "$0")/lib.sh"
run 0 "$kvconform" gate --junit out.xml --json out.json
shared="refused_append_unchanged copy_semantics views_filled_rows order_preserved large_scores decode_within_bound"
flat="$shared one_d_equals_one_row exact_fill generation_fills_capacity seed_worked_example"
ring="$shared one_d_equals_one_row ring_window_last_steps ring_positions_total ring_bulk_equals_singles
      ring_decode_after_wraps ring_generation_slides"
paged="$shared one_d_equals_one_row paged_block_accounting paged_sequence_isolation paged_copy_on_write
       paged_exact_fill paged_blocks_reused paged_preemption paged_memory_in_use"
beam="$shared beam_state_matches_model beam_prefill_equals_steps beam_rollback_truncates beam_layers_independent
      beam_reorder_gathers beam_mask_left_padding beam_gqa_heads beam_memory_formulas
      beam_generation_equals_recompute beam_search_equals_recompute"
for kind in flat ring paged beam; do
  for p in ${!kind}; do
    grep -qE "^$kind +$p +PASS" out.txt || { cat out.txt >&2; fail "no PASS row for $kind / $p"; }
  done
done
# The four f64 references keep their 52 rows; the storage-format references (docs/numerics.md §6) add theirs.
contains out.txt "190 passed, 0 failed, 0 not supported"
"$py" - <<'PY' || fail "reports are invalid"
import json, xml.etree.ElementTree as ET
suites = ET.parse("out.xml").getroot()
assert suites.get("tests") == "190" and suites.get("failures") == "0", suites.attrib
assert {"flat", "ring", "paged", "beam"} <= {s.get("name") for s in suites.iter("testsuite")}
for c in suites.iter("testcase"):
    props = {p.get("name"): p.get("value") for p in c.iter("property")}
    assert int(props["cases"]) >= 1 and float(props["worst_err_over_bound"]) < 1, props
report = json.load(open("out.json"))
for impl in report["implementations"]:
    assert all(p["status"] == "PASS" and p["cases"] >= 1 for p in impl["properties"]), impl
    worst = max(p["worst_err_over_bound"] for p in impl["properties"])
    # Correct double code stays near 0.1 at most; beam's maximum runs over B x Hq problems per decode.
    assert 0 < worst < 0.15, (impl["name"], worst)
    print(impl["name"], "worst err/bound", worst)
PY
