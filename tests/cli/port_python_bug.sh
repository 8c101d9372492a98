# A seeded-bug twin of a numpy port fails the property meant to catch it with a shrunk trace of at most MAX_OPS ops,
# which replays as a failure on the twin and passes on the correct port; a MESSAGE, when given, is in the failure.
# Usage: port_python_bug.sh KVCONFORM ROOT KIND BUG PROPERTY MAX_OPS [PORT [MESSAGE]] (PORT: numpy_port.py by default;
# a script and its arguments, as "numpy_format_port.py e4m3")
source "$(dirname "$0")/port_python_lib.sh"
kind=$3 bug=$4 property=$5 max_ops=$6
script=(numpy_port.py)
[ $# -ge 7 ] && read -ra script <<<"$7"
port=("$ex/${script[0]}" "${script[@]:1}")
run 1 "$kvconform" port --kind "$kind" --property "$property" -- "${tracked[@]}" "$py" "${port[@]}" --bug "$bug"
contains out.txt "FAIL port / $property: "
[ $# -ge 8 ] && contains out.txt "$8"
saved=$(ls kvconform-failures/port/"$property"-*.json)
[ "$(echo "$saved" | wc -l)" = 1 ] || fail "expected one saved trace, got: $saved"
check_ops "$saved" "$max_ops"
run 1 "$kvconform" port --kind "$kind" --replay "$saved" -- "${tracked[@]}" "$py" "${port[@]}" --bug "$bug"
contains out.txt "FAIL $saved on port: "
run 0 "$kvconform" port --kind "$kind" --replay "$saved" -- "${tracked[@]}" "$py" "${port[@]}"
no_leftovers
