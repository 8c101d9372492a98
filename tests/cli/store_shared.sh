# Gates sharing one store: 4 at once for 50 rounds, every exit code as when run alone, no entry lost or partial,
# no temporary left. Each gate saves several failures; two of the four write the same entries at the same time.
# Usage: store_shared.sh KVCONFORM [ROUNDS]
source "$(dirname "$0")/lib.sh"
rounds=${2:-50}
gates=("flat-strict-capacity *" "flat-strict-capacity *" "ring-head-off-by-one *" "paged-leak-on-refusal *")
gate() {  # gate STORE "IMPL GLOB": prints the exit code
  local impl=${2% *} glob=${2#* }
  "$kvconform" gate --impl "$impl" --property "$glob" --store "$1" >/dev/null 2>&1
  echo $?
}
# Alone, one after the other: the exit codes and entries every round must reproduce.
alone=""
for g in "${gates[@]}"; do alone+="$(gate alone "$g") "; done
[ "$alone" = "1 1 1 1 " ] || fail "alone: exit codes $alone"
(cd alone && find . -type f | sort | xargs md5sum) >want.txt
for round in $(seq "$rounds"); do
  rm -rf shared
  for i in 0 1 2 3; do gate shared "${gates[$i]}" >code.$i & done
  wait
  codes="$(cat code.0) $(cat code.1) $(cat code.2) $(cat code.3) "
  [ "$codes" = "$alone" ] || fail "round $round: exit codes $codes, alone $alone"
  (cd shared && find . -type f | sort | xargs md5sum) >got.txt
  cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "round $round: the store differs from the runs alone"; }
done
# A store that holds entries: every gate replays them first, still failing, as alone.
for i in 0 1 2 3; do gate shared "${gates[$i]}" >code.$i & done
wait
[ "$(cat code.0) $(cat code.1) $(cat code.2) $(cat code.3) " = "$alone" ] || fail "replaying the shared store"
echo "$rounds rounds of 4 concurrent gates: exit codes and entries as alone"
