# Shared by the Python port tests: lib.sh, the examples folder, a port that only says hello, and a shrink check.
# Usage (sourced): KVCONFORM ROOT ...
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$2
ex=$root/examples/python
port=$ex/numpy_port.py
# The ops of a saved trace, which must be at most $2.
check_ops() {
  "$py" -c "import json,sys; t=json.load(open(sys.argv[1])); n=len(t['ops']); print(sys.argv[1], n, 'ops');
assert n <= int(sys.argv[2]), (n, t)" "$1" "$2" || fail "not shrunk to at most $2 ops: $1"
}
hello_port() {  # hello_port ANSWER: answers the first request with ANSWER, then waits
  port=("${tracked[@]}" bash -c 'read -r l; echo "$1"; exec sleep 100' hello "$1")
}
