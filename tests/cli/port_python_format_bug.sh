# The seeded-bug twin of a numpy format port fails a flat property with a shrunk trace of at most 4 ops whose
# message names the declared format; the trace replays as a failure on the twin and passes on the correct port.
# Format bf16+e4m3 serves the hybrid kind: its twin's block must be freed by one group and retaken by another
# (create, an append filling it, a step or release freeing it, a create, the append retaking it): 5 ops.
# Usage: port_python_format_bug.sh KVCONFORM ROOT FORMAT BUG PROPERTY DECLARED
source "$(dirname "$0")/port_python_lib.sh"
format=$3 bug=$4 property=$5 declared=$6 kind=flat most=4
[ "$format" = bf16+e4m3 ] && kind=hybrid most=5
port=("${tracked[@]}" "$py" "$ex/numpy_format_port.py" "$format")
run 1 "$kvconform" port --kind "$kind" --property "$property" -- "${port[@]}" --bug "$bug"
grep "^FAIL port / $property: " out.txt | grep -qF -- "declared $declared" ||
  { cat out.txt >&2; fail "no failure of $property naming the declared format $declared"; }
saved=$(ls kvconform-failures/port/"$property"-*.json)
[ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
check_ops "$saved" "$most"
run 1 "$kvconform" port --kind "$kind" --replay "$saved" -- "${port[@]}" --bug "$bug"
contains out.txt "FAIL $saved on port: "
run 0 "$kvconform" port --kind "$kind" --replay "$saved" -- "${port[@]}"
no_leftovers
