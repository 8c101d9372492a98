# A port's declared config limits (docs/port-protocol.md §3): no generated config goes beyond them, long cases and
# production head dims included, and every property still runs; the same port without limits is sent larger configs
# (so the check can fail); a malformed limit is exit 2 naming the field.
# Usage: port_limits.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
limited_port() {  # limited_port LIMITS_JSON: the numpy caches of every kind, each declaring LIMITS_JSON for its kind
  port=(env "PORT_LIMITS=$1" "$py" -c "
import json, os, sys; sys.path.insert(0, '$ex')
from kvconform_port import serve
import numpy_port
limits = json.loads(os.environ['PORT_LIMITS'])
caches = [type(c.__name__, (c,), {'limits': limits.get(c.kind, {})}) for c in numpy_port.CACHES]
serve('numpy-limited', caches)
")
}
# beyond KIND LIMITS_JSON: exit 0 when an open of requests.jsonl is beyond the limits; prints the largest of each field.
beyond() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
kind, limits = sys.argv[1], json.loads(sys.argv[2])[sys.argv[1]]
opens = [json.loads(l)["config"] for l in open("requests.jsonl") if '"op":"open"' in l.replace(" ", "")]
most = {f: max(c.get(f, 0) for c in opens) for f in limits}
print(kind, len(opens), "opens, largest", most)
sys.exit(0 if opens and any(most[f] > limits[f] for f in limits) else 1)
PY
}
limits='{"flat": {"capacity": 40, "d_k": 16, "d_v": 12}, "ring": {"capacity": 30, "keep": 3, "d_k": 16},
         "growing": {"step": 20, "d_k": 8, "d_v": 16}, "paged": {"capacity": 100, "block_size": 2, "d_k": 8},
         "prefix": {"capacity": 12, "block_size": 3, "d_k": 16}, "beam": {"capacity": 64, "d_k": 16, "d_v": 16, "q_heads": 6}}'
for kind in flat ring growing paged prefix beam; do
  limited_port "$limits"
  rm -f requests.jsonl
  run 0 "$kvconform" port --kind $kind --cases 30 --store "" -- \
    "${tracked[@]}" bash -c 'tee -a requests.jsonl | "$0" "$@"' "${port[@]}"
  contains out.txt " 0 failed, 0 not supported"
  [ -s requests.jsonl ] || fail "$kind: no request recorded"
  ! beyond $kind "$limits" || fail "$kind: a config beyond the declared limits"
done
# Without limits the same flat port is sent long cases (capacities of 300 rows and more).
limited_port '{}'
rm -f requests.jsonl
run 0 "$kvconform" port --kind flat --property order_preserved --store "" -- \
  "${tracked[@]}" bash -c 'tee -a requests.jsonl | "$0" "$@"' "${port[@]}"
beyond flat '{"flat": {"capacity": 299}}' || fail "no long case reached the port without limits"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"flat":{"limits":{"window":8}}}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "hello.kinds.flat.limits.window"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"paged":{"limits":{"capacity":0}}}}'
run 2 "$kvconform" port --kind paged -- "${port[@]}"
contains err.txt "hello.kinds.paged.limits.capacity"
no_leftovers
