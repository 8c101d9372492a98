# A seeded-bug twin of a numpy format port whose bug is its cache's, not its codec's, fails the property meant to
# catch it with a shrunk trace of at most MAX_OPS ops, which replays as a failure on the twin and passes on the correct
# port: port_python_bug.sh for examples/python/numpy_format_port.py, which takes its FORMAT first.
# Usage: port_python_format_kind_bug.sh KVCONFORM ROOT FORMAT KIND BUG PROPERTY MAX_OPS
source "$(dirname "$0")/port_python_lib.sh"
format=$3 kind=$4 bug=$5 property=$6 max_ops=$7
port=("${tracked[@]}" "$py" "$ex/numpy_format_port.py" "$format")
run 1 "$kvconform" port --kind "$kind" --property "$property" -- "${port[@]}" --bug "$bug"
contains out.txt "FAIL port / $property: "
saved=$(ls kvconform-failures/port/"$property"-*.json)
[ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
check_ops "$saved" "$max_ops"
run 1 "$kvconform" port --kind "$kind" --replay "$saved" -- "${port[@]}" --bug "$bug"
contains out.txt "FAIL $saved on port: "
run 0 "$kvconform" port --kind "$kind" --replay "$saved" -- "${port[@]}"
no_leftovers
