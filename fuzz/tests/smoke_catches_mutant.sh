# The fuzz smoke fails on a mutant, as fuzz/README.md shows: a kind's target run on one exits 1 naming the target.
# Usage: smoke_catches_mutant.sh FUZZ_SOURCE_DIR
set -u
failures=$(mktemp -d -t kvconform-smoke-test.XXXXXX) || exit 2
trap 'rm -rf "$failures"' EXIT
out=$(KVCONFORM_FUZZ_IMPL=latent-scores-without-rotary KVCONFORM_SMOKE_FAILURES=$failures \
  bash "$1/smoke.sh" 2 latent_fuzzer 2>&1)
status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "expected exit 1, got $status"; exit 1; }
grep -q "^FAIL latent_fuzzer" <<<"$out" || { echo "no FAIL line for latent_fuzzer"; exit 1; }
