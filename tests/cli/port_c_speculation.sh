# Prefill, rollback and the reserve through version 3 of the C ABI (docs/port-protocol.md §12): the C ring, with sinks
# and a reserve, passes every ring property on seeds 1 to 3, none NOT SUPPORTED; its twin whose decodes after a
# rollback still attend the rolled-back window fails speculative_rounds and, shrunk to at most 4 ops,
# refused_rollback_unchanged. The ring built as a version 2 library is driven without prefill, rollback or reserve (a
# trace with a reserve stops at not-supported); a library that declares prefill but exports no kvc_prefill, or reports
# version 2, is refused with exit 2.
source "$(dirname "$0")/lib.sh"
good=$2 stale=$3 version_2=$4 unexported=$5 version_2_declaring=$6
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind ring --seed "$seed" --library "$good"
  contains out.txt " 0 failed, 0 not supported"
done
run 1 "$kvconform" port --kind ring --property speculative_rounds --library "$stale"
contains out.txt "FAIL port / speculative_rounds: "
run 1 "$kvconform" port --kind ring --property refused_rollback_unchanged --library "$stale"
contains out.txt "FAIL port / refused_rollback_unchanged: "
saved=$(ls kvconform-failures/port/refused_rollback_unchanged-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
grep -q '"rollback"' "$saved" || fail "no rollback in the shrunk trace: $saved"
run 1 "$kvconform" port --kind ring --replay "$saved" --library "$stale"
run 0 "$kvconform" port --kind ring --replay "$saved" --library "$good"
# Version 2: the same ring without its version 3 functions; the properties behind them are NOT SUPPORTED.
run 0 "$kvconform" port --kind ring --library "$version_2"
only_speculation_unsupported out.txt
contains err.txt "port / ring_sinks_survive: PASS"  # sinks are in version 2
cat >reserve.json <<'JSON'
{"schema": "kvconform-trace", "version": 1, "config": {"kind": "ring", "capacity": 2, "d_k": 1, "d_v": 1, "reserve": 1},
 "ops": [{"op": "append", "k": {"shape": [1], "data": [1]}, "v": {"shape": [1], "data": [2]}}]}
JSON
# A reserve it cannot read: skipped with the reason, not failed (docs/design.md §2.4).
run 0 "$kvconform" port --kind ring --replay reserve.json --library "$version_2"
contains out.txt "SKIPPED reserve.json on port: a library built for C ABI version 2 takes no reserve"
run 0 "$kvconform" port --kind ring --replay reserve.json --library "$good"
run 2 "$kvconform" port --kind ring --library "$unexported"
contains err.txt 'the library declares the capability "prefill" for the ring kind but does not export kvc_prefill'
run 2 "$kvconform" port --kind ring --library "$version_2_declaring"  # version 2 has no kvc_prefill, exported or not
contains err.txt 'the capability "prefill" for the ring kind, which C ABI version 2 has no function for: rebuild it'
no_temporaries
