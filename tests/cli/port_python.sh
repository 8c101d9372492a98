# The numpy port of one kind passes `kvconform port`; under a version 1 harness only the properties that need a
# capability a version 1 port cannot declare (sinks, preempt) may be NOT SUPPORTED.
# Usage: port_python.sh KVCONFORM ROOT KIND [CASES]
source "$(dirname "$0")/port_python_lib.sh"
kind=$3
cases=()
[ $# -ge 4 ] && cases=(--cases "$4")
run 0 "$kvconform" port --kind "$kind" "${cases[@]}" -- "$py" "$port"
contains out.txt " 0 failed"
if harness_v2; then
  contains out.txt " 0 not supported"
elif grep "^NOT SUPPORTED" out.txt | grep -v -e "ring_sinks_survive: needs capability \"sinks\"" \
    -e "paged_preemption: needs capability \"preempt\""; then
  fail "NOT SUPPORTED beyond what a version 1 port cannot declare"
fi
