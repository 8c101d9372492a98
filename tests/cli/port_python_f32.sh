# The float32 flat port declares {"storage": "f32", "working": "f32"} in hello; the harness judges it by that profile
# and it passes. Served as a version 1 port (its hello answer hidden), it is judged as a double cache and fails on its
# first stored row, as docs/port-protocol.md §3 says of a float32 cache that does not declare f32.
# Usage: port_python_f32.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
echo '{"id":1,"op":"hello","protocol":2}' | "$py" "$ex/numpy_port_f32.py" >hello.txt || fail "hello"
"$py" -c "import json,sys; a=json.load(open('hello.txt'));
assert a['kinds'] == {'flat': {'capabilities': ['decode', 'prefill', 'rollback'], 'profile': {'storage': 'f32', 'working': 'f32'}}}, a
assert (a['ok'], a['protocol'], a['digest']) == (True, 2, True), a" || fail "the f32 port's hello: $(cat hello.txt)"
run 0 "$kvconform" port --kind flat -- "${tracked[@]}" "$py" "$ex/numpy_port_f32.py"
contains out.txt " 0 failed"
# Version 1: a wrapper answers hello as an unknown op, so the harness restarts the port and never asks again (the
# restarted port gets its requests through the wrapper unchanged).
v1=(bash -c 'read -r l; if [[ $l == *\"hello\"* ]]; then
               [[ $l =~ \"id\":([0-9]+) ]] && echo "{\"id\":${BASH_REMATCH[1]},\"ok\":false}"; exec "$@"; fi
             { printf "%s\n" "$l"; exec cat; } | "$@"' v1)
run 1 "$kvconform" port --kind flat --property views_filled_rows -- \
  "${tracked[@]}" "${v1[@]}" "$py" "$ex/numpy_port_f32.py"
contains out.txt "FAIL port / views_filled_rows: state at append: key row 0 is ["
no_leftovers
