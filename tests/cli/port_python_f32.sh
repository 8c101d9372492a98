# The float32 flat port declares {"storage": "f32", "working": "f32"} in hello. A version 2 harness judges it by that
# profile and it passes; a version 1 harness, which never asks, judges it as a double cache and it fails on its first
# stored row, as docs/port-protocol.md §3 says of a float32 cache that does not declare f32.
# Usage: port_python_f32.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
echo '{"id":1,"op":"hello","protocol":2}' | "$py" "$ex/numpy_port_f32.py" >hello.txt || fail "hello"
"$py" -c "import json,sys; a=json.load(open('hello.txt'));
assert a['kinds'] == {'flat': {'capabilities': ['decode'], 'profile': {'storage': 'f32', 'working': 'f32'}}}, a
assert (a['ok'], a['protocol'], a['digest']) == (True, 2, True), a" || fail "the f32 port's hello: $(cat hello.txt)"
if harness_v2; then
  run 0 "$kvconform" port --kind flat -- "${tracked[@]}" "$py" "$ex/numpy_port_f32.py"
  contains out.txt " 0 failed"
else
  run 1 "$kvconform" port --kind flat --property views_filled_rows -- \
    "${tracked[@]}" "$py" "$ex/numpy_port_f32.py"
  contains out.txt "FAIL port / views_filled_rows: state at append: key row 0 is ["
fi
no_leftovers
