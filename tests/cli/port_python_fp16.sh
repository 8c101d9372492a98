# The fp16 numpy port (numpy's IEEE conversion: a value beyond 65504 stores as ±inf; decode in float32) declares its
# formats in hello and passes every flat, ring and growing property for each seed given, and traces of each kind
# decode over a stored infinity (the "stored infinity" coverage event, docs/numerics.md §4.5).
# Usage: port_python_fp16.sh KVCONFORM ROOT PROFILE SEED...
source "$(dirname "$0")/port_python_lib.sh"
port=$ex/numpy_port_fp16.py
profile=$3
shift 3
echo '{"id":1,"op":"hello","protocol":2}' | "$py" "$port" >hello.txt || fail "hello"
"$py" -c "import json; a=json.load(open('hello.txt'))
profile = {'keys': 'fp16', 'values': 'fp16', 'working': 'f32'}
assert sorted(a['kinds']) == ['flat', 'growing', 'ring'], a
assert all(k['profile'] == profile and 'decode' in k['capabilities'] for k in a['kinds'].values()), a" || fail "the fp16 port's hello: $(cat hello.txt)"
for kind in flat ring growing; do
  for seed in "$@"; do
    run 0 "$kvconform" port --kind "$kind" --profile "$profile" --seed "$seed" --stats -- "${tracked[@]}" "$py" "$port"
    contains out.txt " 0 failed"
    contains out.txt " 0 not supported"
    stored=$(awk '$1 == "stored" && $2 == "infinity" {print $3; exit}' out.txt)
    echo "$kind $profile seed $seed: $stored traces decoded over a stored infinity"
    [ "${stored%%/*}" -gt 0 ] 2>/dev/null || fail "$kind seed $seed: no trace stored an infinity ($stored)"
  done
done
no_leftovers
