# Preemption through the port library (victims' ids back to handles), on a fixed trace whose outcome is known.
# Two sequences and a fork of the first; the first's append takes both blocks: the fork (newest) and then the second
# are preempted; a further append is refused, as no other sequence is left to release.
# Usage: port_python_preempt.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
cat >preempt.json <<'JSON'
{"schema": "kvconform-trace", "version": 1,
 "config": {"kind": "paged", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1, "preempt": true},
 "ops": [{"op": "create"}, {"op": "create"}, {"op": "fork", "seq": 0},
         {"op": "append", "seq": 1, "k": {"shape": [1], "data": [1.0]}, "v": {"shape": [1], "data": [2.0]}},
         {"op": "append", "seq": 0, "k": {"shape": [2, 1], "data": [3.0, 4.0]},
          "v": {"shape": [2, 1], "data": [5.0, 6.0]}},
         {"op": "append", "seq": 0, "k": {"shape": [1], "data": [7.0]}, "v": {"shape": [1], "data": [8.0]}}]}
JSON
run 0 "$kvconform" replay --impl paged preempt.json  # the reference agrees with the trace's story
run 0 "$kvconform" port --kind paged --replay preempt.json -- \
  "${tracked[@]}" bash -c "'$py' '$port' | tee -a answers.jsonl"
contains out.txt "PASS preempt.json on port (6 ops)"
contains answers.jsonl '"preempted":[2,1]'
contains answers.jsonl '"ok":false,"error":"capacity"'
no_leftovers
