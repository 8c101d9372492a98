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
# only_speculation_unsupported OUT: nothing failed, and the only properties NOT SUPPORTED are those behind the prefill
# and rollback capabilities (docs/design.md §2.3), for a cache that does not offer them.
only_speculation_unsupported() {
  contains "$1" " 0 failed"
  local other
  other=$(grep -E "^NOT SUPPORTED " "$1" | grep -vE 'needs capability "(prefill|rollback)"$')
  [ -z "$other" ] || fail "NOT SUPPORTED beyond prefill and rollback: $other"
}
# skip MESSAGE: a tool the test needs is missing here; ctest reports it skipped (SKIP_RETURN_CODE 77), never passed.
skip() { echo "SKIPPED: $*"; exit 77; }

# Ports and temporary files: every port fixture records its pid and process group in $groups by
# starting through "${tracked[@]}"; no_leftovers checks that each port led a group of its own, that
# no process of those groups is left (zombies aside) and that no temporary file was left behind.
export TMPDIR=$scratch/tmp
mkdir -p "$TMPDIR"
groups=$scratch/port-groups.txt
tracked=(bash -c 'read -r _ _ _ _ g _ </proc/$$/stat; echo $$ $g >> "$0"; exec "$@"' "$groups")
no_leftovers() {
  local g pid until=$((SECONDS + 3))  # a process sent SIGKILL takes a moment to go
  [ -s "$groups" ] || fail "no port recorded its process group"
  while read -r pid g; do
    [ "$pid" = "$g" ] || fail "port $pid ran in process group $g, not in a group of its own"
  done <"$groups"
  for g in $(cut -d' ' -f1 "$groups" | sort -u); do
    while ps -eo pgid=,stat= | awk -v g="$g" '$1 == g && $2 !~ /^Z/ {n++} END {exit n == 0}'; do
      [ $SECONDS -lt $until ] || { ps -eo pid,pgid,stat,args | awk -v g="$g" '$2 == g' >&2; fail "port group $g left"; }
      sleep 0.1
    done
  done
  no_temporaries
}
# no_temporaries: no temporary file in $TMPDIR and no store or report temporary anywhere in the scratch folder.
no_temporaries() {
  [ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
  local temps
  temps=$(find "$scratch" -name '.*.tmp.*')
  [ -z "$temps" ] || fail "store temporaries left: $temps"
}
