# A port that hangs, exits mid-trace or prints garbage is a FAIL with a clear message within the time limit.
# Usage: port_misbehaves.sh KVCONFORM hang|exit|garbage
source "$(dirname "$0")/lib.sh"
case $2 in
  hang) port=(sleep 1000); message='did not answer "open" within 1000 ms' ;;
  # Answers the first request, then exits while the next one waits.
  exit) port=(bash -c 'read -r l; id=$(sed -E "s/.*\"id\":([0-9]+).*/\1/" <<<"$l"); echo "{\"id\":$id,\"ok\":true}"
                       read -r l; echo dying >&2; exit 3')
        message="the port exited while answering" ;;
  garbage) port=(bash -c 'while read -r l; do echo hello; done'); message="not JSON: hello" ;;
esac
start=$SECONDS
run 1 timeout 60 "$kvconform" port --kind flat --timeout-ms 1000 --store "" -- "${port[@]}"
contains out.txt "$message"
[ "$2" != exit ] || contains out.txt "exit status 3"
[ "$2" != exit ] || contains out.txt "dying"
[ $((SECONDS - start)) -le 30 ] || fail "took $((SECONDS - start)) s"
