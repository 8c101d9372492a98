# Production shapes and long cases (docs/design.md §4.4) are guarded like any required event: --stats shows the
# shape events hit on every kind's reference, and a quick run whose generators no longer make them fails naming them.
source "$(dirname "$0")/lib.sh"
# hits KIND EVENT: the "all" count of EVENT in KIND's --stats table of out.txt (0 when absent).
hits() { awk -v k="coverage of $1:" -v e="$2" '$0 ~ "^coverage of" {on = index($0, k) == 1}
  on && index($0, "* " e " ") == 1 {split(substr($0, length(e) + 3), f, " "); split(f[1], a, "/"); print a[1]; exit}
  ' out.txt; }
# Usage: shapes_guard.sh KVCONFORM KIND...: every kind of the table, whose reference has the kind's name.
kinds=("${@:2}")
refs=()
for kind in "${kinds[@]}"; do refs+=(--impl "$kind"); done
run 0 "$kvconform" gate --stats -j 2 --store "" "${refs[@]}"
for kind in "${kinds[@]}"; do
  for e in "wide head" "long cache"; do
    [ "$(hits $kind "$e")" -gt 0 ] 2>/dev/null || { cat out.txt >&2; fail "$kind: no trace hit \"$e\""; }
  done
done
[ "$(hits paged "pool past 2^16 blocks")" -gt 0 ] 2>/dev/null || fail "paged: no pool past 2^16 blocks"
[ "$(hits beam "beyond 2^24 elements")" -gt 0 ] 2>/dev/null || fail "beam: no cache beyond 2^24 elements"
grep -q "MISSING" out.txt && fail "a required event is missing on the default seed"

export KVCONFORM_TEST_DISABLE_GENERATOR=long-cases
run 1 "$kvconform" gate --impl paged --impl beam --store ""
for e in 'paged: the required event "long cache"' 'paged: the required event "pool past 2^16 blocks"' \
  'beam: the required event "long cache"' 'beam: the required event "beyond 2^24 elements"'; do
  contains out.txt "COVERAGE $e never occurred"
done
grep -q '"wide head"' out.txt && fail "wide heads were missed with only the long cases disabled"
export KVCONFORM_TEST_DISABLE_GENERATOR=production-shapes
run 1 "$kvconform" gate --impl flat --store ""
contains out.txt 'COVERAGE flat: the required event "wide head" never occurred'
grep -q '"long cache"' out.txt && fail "long caches were missed with only the production shapes disabled"
exit 0
