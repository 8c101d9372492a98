# A flat cache in C with gpt-oss's attention (learned sinks on a sliding window of 8, docs/numerics.md §7) takes each
# decode's sink logit through kvc_sinks (C ABI version 6) and passes every flat property but the plain worked example
# (NOT SUPPORTED); its twin, the sink as a bias on key 0, fails within 4 ops naming the oracle's sink semantics; built
# without kvc_sinks exported, it is refused with exit 2 before any cache.
# Usage: port_c_sinks.sh KVCONFORM GOOD BUG UNEXPORTED
source "$(dirname "$0")/lib.sh"
good=$2 bug=$3 unexported=$4
run 0 "$kvconform" port --kind flat --library "$good"
contains out.txt "13 passed, 0 failed, 1 not supported"
run 1 "$kvconform" port --kind flat --property decode_within_bound --library "$bug"
contains out.txt "joins the softmax's normaliser with no value"
saved=$(ls kvconform-failures/port/decode_within_bound-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
run 0 "$kvconform" port --kind flat --replay "$saved" --library "$good"
run 2 "$kvconform" port --kind flat --library "$unexported"
contains err.txt "the library declares learned sinks for the flat kind but does not export kvc_sinks (C ABI version 6)"
no_temporaries
