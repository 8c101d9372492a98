# A q8_0 flat cache in C behind the C ABI passes every flat property on seeds 1 to 3, prefill and rollback included,
# its scales exposed and judged; its twin (scale amax / 128) fails with a trace of at most 4 ops whose message names
# the declared format.
source "$(dirname "$0")/lib.sh"
good=$2 bug=$3
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind flat --seed "$seed" --library "$good"
  contains out.txt " 0 failed, 0 not supported"
done
run 1 "$kvconform" port --kind flat --property exact_fill --library "$bug"
grep -qE "^FAIL port / exact_fill: format at append: key row 0 group 0 scale is .* within one rounding of fp16 \(keys declared int8 g32 token sym scale=fp16\)" \
  out.txt || { cat out.txt >&2; fail "no format failure naming q8_0 for the twin"; }
saved=$(ls kvconform-failures/port/exact_fill-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
run 0 "$kvconform" port --kind flat --replay "$saved" --library "$good"
no_temporaries
