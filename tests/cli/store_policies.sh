# Stored failures and baselines carry the policies a cache declared (docs/design.md §2.4): a stored trace is replayed
# on a cache declaring the same, and skipped with its reason (not failed) on one declaring others or lacking a
# capability the trace needs; a baseline line holds only for the policies it lists. Usage: store_policies.sh KVCONFORM
# ROOT
source "$(dirname "$0")/port_python_lib.sh"
vllm=("${tracked[@]}" "$py" "$ex/engine_port.py" vllm-prefix)
undeclared=(--undeclare hit_limit)  # it still stops its hits before the last token
property=(--kind prefix --property prefix_hits_longest_prefix --cases 25)
run 1 "$kvconform" port "${property[@]}" -- "${vllm[@]}" "${undeclared[@]}"
saved=$(ls kvconform-failures/port/prefix_hits_longest_prefix-*.json)
"$py" -c "import json,sys; p=json.load(open(sys.argv[1]))['policies']
assert p == {'duplicates': 'registered', 'free_order': 'one_queue', 'rollback_blocks': 'kept'}, p" "$saved" ||
  fail "the saved trace does not carry the policies its cache declared"
# Declared alike: replayed, and it still fails.
run 1 "$kvconform" port "${property[@]}" -- "${vllm[@]}" "${undeclared[@]}"
contains err.txt "replayed stored $saved: still fails"
run 1 "$kvconform" port --kind prefix --replay "$saved" -- "${vllm[@]}" "${undeclared[@]}"
contains out.txt "FAIL $saved on port"
# Declaring every choice the cache makes: skipped, its reason on the log and in the JSON report; the cell is generated.
run 0 "$kvconform" port "${property[@]}" --json report.json -- "${vllm[@]}"
why="recorded under the policies duplicates=registered, free_order=one_queue, rollback_blocks=kept; port declares \
duplicates=registered, free_order=one_queue, hit_limit=all_but_last, rollback_blocks=kept"
contains err.txt "skipped stored $saved: $why"
contains report.json "$why"
run 0 "$kvconform" port --kind prefix --replay "$saved" -- "${vllm[@]}"
contains out.txt "SKIPPED $saved on port: $why"
# A capability the port stopped declaring: a failure stored with sinks (its config's keep), then a ring port without
# them, on a property that does not need them.
run 1 "$kvconform" port --kind ring --property ring_positions_total -- "${tracked[@]}" "$py" "$port" \
  --bug ring-bulk-evicts-sinks
sinks=$(ls kvconform-failures/port/ring_positions_total-*.json)
grep -q '"keep"' "$sinks" || fail "the stored trace has no sinks: $sinks"
no_sinks=("$py" -c "
import sys; sys.path.insert(0, '$ex')
from kvconform_port import serve
import numpy_port
serve('numpy-no-sinks', [type('NoSinks', (numpy_port.ring.RingCache,), {'supports_sinks': False})])
")
run 0 "$kvconform" port --kind ring --property ring_positions_total -- "${tracked[@]}" "${no_sinks[@]}"
contains err.txt "skipped stored $sinks: "
contains out.txt "1 passed, 0 failed"
# A baseline line carries the policies: applied when the port declares them, not when it declares others.
run 1 "$kvconform" port "${property[@]}" --store "" --write-baseline known.csv -- "${vllm[@]}" "${undeclared[@]}"
contains known.csv "port [duplicates=registered free_order=one_queue rollback_blocks=kept],prefix_hits_longest_prefix,"
run 0 "$kvconform" port "${property[@]}" --store "" --baseline known.csv -- "${vllm[@]}" "${undeclared[@]}"
contains out.txt "KNOWN FAILURE"
run 0 "$kvconform" port "${property[@]}" --store "" --baseline known.csv --json other.json -- "${vllm[@]}"
contains other.json "baseline line 3: listed under the policies duplicates=registered, free_order=one_queue, \
rollback_blocks=kept, not applied"
no_leftovers
