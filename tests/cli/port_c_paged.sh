# The block-pool kinds through version 3 of the C ABI (docs/port-protocol.md §12): the C paged cache, with fork,
# copy-on-write, prefill and rollback, passes every paged property on seeds 1 to 3 but preemption, which it does not
# declare; its twin whose rollback clears the rest of a block a fork still holds fails paged_rollback_sibling_intact
# with a trace shrunk to at most 4 ops, which the correct cache replays clean; the same cache claiming the tiered, the
# recurrent or the radix kind too, or the prefix kind's phases, is refused before any cache, the message naming the
# pipe (docs/kinds/tiered.md, recurrent.md, radix.md, prefix.md).
# Usage: port_c_paged.sh KVCONFORM GOOD BUG TIERED RECURRENT RADIX PHASES
source "$(dirname "$0")/lib.sh"
good=$2 bug=$3 tiered=$4 recurrent=$5 radix=$6 phases=$7
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind paged --seed "$seed" --library "$good"
  contains out.txt " 0 failed, 1 not supported"
  contains out.txt "NOT SUPPORTED port / paged_preemption: needs capability \"preempt\""
  for property in prefill_chunked_equals_whole prefill_equals_decode_steps speculative_rounds \
                  refused_rollback_unchanged paged_rollback_sibling_intact; do
    grep -qE "^port +$property +PASS " out.txt || fail "$property did not pass on seed $seed"
  done
done
run 1 "$kvconform" port --kind paged --property paged_rollback_sibling_intact --library "$bug"
contains out.txt "FAIL port / paged_rollback_sibling_intact: "
saved=$(ls kvconform-failures/port/paged_rollback_sibling_intact-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
grep -q '"rollback"' "$saved" || fail "no rollback in the shrunk trace: $saved"
run 1 "$kvconform" port --kind paged --replay "$saved" --library "$bug"
run 0 "$kvconform" port --kind paged --replay "$saved" --library "$good"
run 2 "$kvconform" port --kind paged --library "$tiered"
contains err.txt "the library declares the tiered kind, which the C ABI does not carry"
contains err.txt "serve that cache as a port over the pipe"
run 2 "$kvconform" port --kind paged --library "$recurrent"
contains err.txt "the library declares the recurrent kind, which the C ABI does not carry"
run 2 "$kvconform" port --kind paged --library "$radix"
contains err.txt "the library declares the radix kind, which the C ABI does not carry"
run 2 "$kvconform" port --kind paged --library "$phases"
contains err.txt "the library declares the capability \"phases\" for the prefix kind, which the C ABI cannot carry"
contains err.txt "serve that cache as a port over the pipe"
no_temporaries
