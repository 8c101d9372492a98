# A port that misbehaves is a FAIL with a clear message within its limits; nothing of it is left behind.
# Usage: port_misbehaves.sh KVCONFORM MODE
#   hang, exit, garbage, close-stdout, unread-stdin, ignore-term, grandchild: one fault each
source "$(dirname "$0")/lib.sh"
timeout_ms=1000 replay=()
answer_open='read -r l; id=$(sed -E "s/.*\"id\":([0-9]+).*/\1/" <<<"$l"); echo "{\"id\":$id,\"ok\":true}"'
case $2 in
  hang) port=(sleep 1000); message='did not answer "open" within 1000 ms' ;;
  # Answers the first request, then exits while the next one waits.
  exit) port=(bash -c "$answer_open"'; read -r l; echo dying >&2; exit 3')
        message="the port exited while answering" ;;
  garbage) port=(bash -c 'while read -r l; do echo hello; done'); message="not JSON: hello" ;;
  # Closes its stdout but keeps running: no wait for its exit.
  close-stdout) port=(bash -c 'exec >&-; sleep 1000')
                message='closed its stdout while answering "open" but kept running' ;;
  # Stops reading its stdin: a 1.5 MB request cannot be written.
  unread-stdin)
    port=(bash -c "$answer_open; sleep 1000"); message='did not read the request "append" within 1000 ms'
    "$py" -c "
import json
d = 65536
row = {'shape': [1, d], 'data': [0.123456789012345] * d}
print(json.dumps({'schema': 'kvconform-trace', 'version': 1, 'property': 'exact_fill',
  'config': {'kind': 'flat', 'capacity': 2, 'd_k': d, 'd_v': d}, 'ops': [{'op': 'append', 'k': row, 'v': row}]}))
" >big.json
    replay=(--replay big.json) ;;
  # Ignores SIGTERM (and so does its child): SIGKILL after the grace period.
  ignore-term) port=(bash -c "trap '' TERM; sleep 1000"); message='did not answer "open" within 1000 ms' ;;
  # Starts a grandchild in its group that outlives it unless the whole group is ended.
  grandchild) port=(bash -c '(trap "" TERM; sleep 1000) & exec sleep 1000'); message='did not answer "open"' ;;
  *) fail "unknown mode $2" ;;
esac
start=$SECONDS
run 1 timeout 60 "$kvconform" port --kind flat --timeout-ms "$timeout_ms" --store "" "${replay[@]}" -- \
  "${tracked[@]}" "${port[@]}"
contains out.txt "$message"
[ "$2" != exit ] || contains out.txt "exit status 3"
[ "$2" != exit ] || contains out.txt "dying"
[ $((SECONDS - start)) -le 30 ] || fail "took $((SECONDS - start)) s"
no_leftovers
