# Shared helpers for the CLI tests: a scratch directory, and checks that say what went wrong.
set -u
kvconform=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
py=/usr/bin/python3  # Debian's python: the first python3 on PATH may be another

fail() { echo "FAILED: $*" >&2; exit 1; }
# run EXPECTED_EXIT CMD... : runs CMD, keeps stdout/stderr in out.txt/err.txt, checks the exit code
run() {
  local want=$1; shift
  "$@" >out.txt 2>err.txt
  local got=$?
  [ "$got" = "$want" ] || { cat out.txt err.txt >&2; fail "exit $got, expected $want: $*"; }
}
contains() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks: $2"; }; }
