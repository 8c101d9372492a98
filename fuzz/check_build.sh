#!/usr/bin/env bash
# Emulates OSS-Fuzz's check of a build: every target runs, no seed crashes, instrumentation is present.
# Usage: check_build.sh OUT_DIR
set -u
out=${1:?usage: check_build.sh OUT_DIR}
failures=0
problem() { echo "FAIL $*"; failures=$((failures + 1)); }
targets=()
for f in "$out"/*; do
  [ -f "$f" ] && [ -x "$f" ] && nm "$f" 2>/dev/null | grep -q ' T LLVMFuzzerTestOneInput' && targets+=("$f")
done
[ ${#targets[@]} -gt 0 ] || { echo "FAIL no fuzz targets in $out"; exit 1; }
for t in "${targets[@]}"; do
  name=$(basename "$t")
  symbols=$(nm "$t" 2>/dev/null)
  grep -q '__sanitizer_cov' <<<"$symbols" || problem "$name: no coverage instrumentation"
  grep -q '__asan_report' <<<"$symbols" || problem "$name: no AddressSanitizer instrumentation"
  grep -q '__ubsan_handle' <<<"$symbols" || problem "$name: no UndefinedBehaviorSanitizer instrumentation"
  for extra in "${name}_seed_corpus.zip" "$name.dict" "$name.options"; do
    [ -f "$out/$extra" ] || problem "$name: missing $extra"
  done
  seeds=$(mktemp -d)
  unzip -q -o "$out/${name}_seed_corpus.zip" -d "$seeds" 2>/dev/null || problem "$name: unreadable seed corpus"
  count=$(find "$seeds" -type f | wc -l)
  [ "$count" -gt 0 ] || problem "$name: empty seed corpus"
  "$t" -runs=0 "$seeds" >"$seeds.log" 2>&1 || { tail -5 "$seeds.log"; problem "$name: a seed crashes"; }
  work=$(mktemp -d)
  "$t" -seed=1 -runs=200 -dict="$out/$name.dict" "$work" "$seeds" >"$seeds.log" 2>&1 ||
    { tail -5 "$seeds.log"; problem "$name: 200 fuzzing runs crashed"; }
  rm -rf "$seeds" "$seeds.log" "$work"
  echo "ok   $name ($count seeds)"
done
echo "${#targets[@]} targets checked, $failures problems"
[ "$failures" -eq 0 ]
