# Shared by the Python port tests: lib.sh, the examples folder, and whether the harness speaks protocol version 2.
# Usage (sourced): KVCONFORM ROOT ...
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$2
ex=$root/examples/python
port=$ex/numpy_port.py
# Version 2 harnesses send hello (docs/port-protocol.md §3), and their generated schema has it: until then
# no port can declare a profile or the sinks and preempt capabilities, so those properties are NOT SUPPORTED.
harness_v2() { "$kvconform" schema port | grep -q '"hello"'; }
# The ops of a saved trace, which must be at most $2.
check_ops() {
  "$py" -c "import json,sys; t=json.load(open(sys.argv[1])); n=len(t['ops']); print(sys.argv[1], n, 'ops');
assert n <= int(sys.argv[2]), (n, t)" "$1" "$2" || fail "not shrunk to at most $2 ops: $1"
}
