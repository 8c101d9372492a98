# The latent kind through versions 4 and 5 of the C ABI (docs/port-protocol.md §12): the C latent cache, with fork,
# copy-on-write, rollback, an absorbed decode per head (kvc_decode_latent) and its prefill (kvc_prefill_latent), passes
# every latent property on seeds 1 to 3; its twin whose head h folds its query with the next head's W_uk fails
# latent_decode_heads with a trace shrunk to at most 4 ops, which the correct cache replays clean; built as version 4
# while declaring "prefill", it is refused before any cache. Usage: port_c_latent.sh KVCONFORM GOOD BUG ABI4
source "$(dirname "$0")/lib.sh"
good=$2 bug=$3 abi4=$4
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind latent --seed "$seed" --library "$good"
  contains out.txt " 0 failed, 0 not supported"
  for property in latent_decode_heads latent_values_are_rows latent_rollback_sibling_intact \
    prefill_chunked_equals_whole prefill_equals_decode_steps speculative_rounds; do
    grep -qE "^port +$property +PASS " out.txt || fail "$property did not pass on seed $seed"
  done
done
run 1 "$kvconform" port --kind latent --property latent_decode_heads --library "$bug"
contains out.txt "FAIL port / latent_decode_heads: "
saved=$(ls kvconform-failures/port/latent_decode_heads-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
run 1 "$kvconform" port --kind latent --replay "$saved" --library "$bug"
run 0 "$kvconform" port --kind latent --replay "$saved" --library "$good"
run 2 "$kvconform" port --kind latent --library "$abi4"
contains err.txt 'declares the capability "prefill" for the latent kind, which C ABI version 4 has no function for'
contains err.txt "export kvc_prefill_latent"
no_temporaries
