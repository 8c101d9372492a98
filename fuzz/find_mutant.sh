#!/usr/bin/env bash
# A fuzz target finds a mutant of its kind from the seed corpus within a bounded, seeded run.
# Usage: find_mutant.sh TARGET_BINARY SEED_CORPUS MUTANT MAX_RUNS
set -u
target=$1 corpus=$2 mutant=$3 runs=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s%N)
KVCONFORM_FUZZ_IMPL=$mutant KVCONFORM_FUZZ_ARTIFACTS=$work \
  "$target" -seed=1 -runs="$runs" -max_total_time=60 -artifact_prefix="$work/" "$work" "$corpus" >"$work/log" 2>&1
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
signature=$(grep -m1 '^kvconform-fuzz: ' "$work/log")
if [ $status -eq 0 ] || [ -z "$signature" ]; then
  tail -20 "$work/log"
  echo "FAILED: $(basename "$target") did not find $mutant within $runs runs"
  exit 1
fi
ls "$work"/kvconform-*.json >/dev/null 2>&1 || { echo "FAILED: no JSON trace written"; exit 1; }
echo "found $mutant in ${elapsed_ms} ms: $signature"
