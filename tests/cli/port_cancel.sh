# A signal while a port is slow to answer stops the run within a second whatever --timeout-ms (60 s here): the port
# is ended, the failures found are saved, the reports are written marked partial; and the processes a port started in
# sessions of their own (setsid) are ended with it.
# Usage: port_cancel.sh KVCONFORM SOURCE_DIR MODE
#   TERM   the port hangs on its first request (after hello); SIGTERM: exit 143, the cell INTERRUPTED, nothing saved
#   INT    the same with a port that ignores SIGTERM while it hangs, and so does its grandchild in a session of its own
#          (only SIGKILL ends them); SIGINT: exit 130
#   found  a port with a bug hangs once the first property has failed; SIGTERM: every failure found is saved
#   setsid a correct port, run to its clean end, whose grandchildren left its group (one double-forked, that one
#          ignoring SIGTERM): none is left after the run
# Every port here starts two grandchildren in sessions of their own; none may be left.
source "$(dirname "$0")/lib.sh"
examples=$2/examples/python mode=$3
hang_port=("$py" "$(dirname "$0")/hang_port.py" "$examples" hang)
# The port's grandchildren in sessions of their own write their pids to escaped.txt; a failed check must not leave them.
trap 'kill -KILL $(cat "$scratch/escaped.txt" 2>/dev/null) 2>/dev/null; rm -rf "$scratch"' EXIT
ignore=
[ "$mode" = TERM ] || [ "$mode" = found ] || ignore='trap \"\" TERM;'  # then SIGKILL ends it, after the wait for it
escape=(bash -c 'setsid bash -c "echo \$\$ >>escaped.txt; exec sleep 1000" &
  setsid -f bash -c "'"$ignore"' echo \$\$ >>escaped.txt; exec sleep 1000"
  until [ "$(wc -l <escaped.txt)" -ge 2 ]; do sleep 0.01; done 2>/dev/null
  exec "$@"' escape)
none_escaped() {
  local pid
  [ "$(wc -l <escaped.txt)" = 2 ] || fail "the port's grandchildren did not start"
  for pid in $(cat escaped.txt); do
    ! kill -0 "$pid" 2>/dev/null || { ps -o pid,ppid,sid,stat,args -p "$pid" >&2; fail "grandchild $pid was left"; }
  done
  : >escaped.txt
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

if [ "$mode" = setsid ]; then
  run 0 "$kvconform" port --kind flat --property exact_fill --store "" -- "${tracked[@]}" "${escape[@]}" \
    "$py" "$examples/numpy_port.py"
  none_escaped
  no_leftovers
  exit 0
fi

case $mode in
  TERM) signal=TERM want=143 port=("${hang_port[@]}"); touch hang ;;
  INT) signal=INT want=130 port=("${hang_port[@]}" --ignore-term); touch hang ;;
  found) signal=TERM want=143 port=("${hang_port[@]}" --bug flat-strict-capacity) ;;
  *) fail "unknown mode $mode" ;;
esac
"$kvconform" port --kind flat --timeout-ms 60000 --json r.json --junit r.xml -- "${tracked[@]}" "${escape[@]}" \
  "${port[@]}" >out.txt 2>err.txt &
harness=$!
if [ "$mode" = found ]; then
  for _ in $(seq 200); do grep -q "port / exact_fill: FAIL" err.txt && break; sleep 0.05; done
  contains err.txt "port / exact_fill: FAIL"
  touch hang
fi
for _ in $(seq 200); do [ -s hang ] && break; sleep 0.05; done  # the port hangs on the request it wrote there
[ -s hang ] || { cat out.txt err.txt >&2; fail "the port never hung"; }
sleep 0.2
start=$(now_ms)
kill -$signal $harness
for _ in $(seq 100); do kill -0 $harness 2>/dev/null || break; sleep 0.02; done
took=$(($(now_ms) - start))
if kill -0 $harness 2>/dev/null; then
  kill -KILL $harness
  while read -r _ g; do kill -KILL -- "-$g"; done <"$groups"  # the ports it can no longer end
  fail "still running ${took} ms after SIG$signal"
fi
wait $harness
got=$?
[ "$got" = "$want" ] || { cat out.txt err.txt >&2; fail "exit $got, expected $want"; }
echo "stopped ${took} ms after SIG$signal"
[ "$took" -lt 2000 ] || fail "took ${took} ms to stop after SIG$signal"
contains out.txt "INTERRUPTED: interrupted by SIG$signal; the matrix above is partial"
MODE=$mode "$py" - <<'PY' || fail "reports"
import glob, json, os, xml.etree.ElementTree as ET
r = json.load(open("r.json"))
assert r["partial"] is True and r["stopped"] == "interrupted by SIG" + ("INT" if os.environ["MODE"] == "INT" else "TERM"), r
cells = r["implementations"][0]["properties"]
saved = sorted(os.path.basename(p) for p in glob.glob("kvconform-failures/port/*.json"))
fails = sorted(c["name"] for c in cells if c["status"] == "FAIL")
if os.environ["MODE"] == "found":
    # The failures found before the signal are kept and saved; the cell it landed in has its own or none.
    assert cells[0]["name"] == "exact_fill" and cells[0]["status"] == "FAIL", cells[0]
    assert cells[-1]["status"] in ("INTERRUPTED", "FAIL"), cells[-1]
else:
    # The first request hung: the first cell is INTERRUPTED, and nothing is a finding.
    assert [c["status"] for c in cells] == ["INTERRUPTED"], cells
assert [s.rsplit("-", 1)[0] for s in saved] == fails, (saved, fails)
assert all("did not answer" not in c.get("message", "") for c in cells), "the cut wait was taken for a hang"
interrupted = [c for c in cells if c["status"] == "INTERRUPTED"]
for c in interrupted:
    assert c["message"].startswith("interrupted by SIG"), c
assert ET.parse("r.xml").getroot().get("errors") == str(len(interrupted))
PY
none_escaped
no_leftovers
