#!/usr/bin/env bash
# A local fuzzing campaign: every target for SECONDS with -fork, corpus merged back, crashes kept as JSON traces.
# Usage: campaign.sh [SECONDS_PER_TARGET] [JOBS] [TARGET...]  (every target of fuzz_targets.txt by default)
# (needs the fuzz preset: cmake --preset fuzz && cmake --build --preset fuzz)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
bin=$fuzz_bin
seconds=${1:-600}
jobs=${2:-$(nproc)}
shift $(($# < 2 ? $# : 2))
results=${KVCONFORM_CAMPAIGN_DIR:-$here/../kvconform-campaign}
select_targets "$@" || exit 2
mkdir -p "$results"
for t in "${targets[@]}"; do
  target_flags "$t"
  work=$results/$t
  mkdir -p "$work/corpus" "$work/crashes"
  echo "== $t: ${seconds}s, $jobs jobs (progress: $work/fuzz.log)"
  KVCONFORM_FUZZ_ARTIFACTS=$work/crashes "$bin/$t" -fork="$jobs" -ignore_crashes=1 -max_total_time="$seconds" \
    "${flags[@]}" -artifact_prefix="$work/crashes/" "$work/corpus" "$here/corpus/$t" 2>&1 |
    tee "$work/fuzz.log" |
    grep --line-buffered -E '^#[0-9]+.*(NEW|REDUCE|pulse|DONE)|kvconform-fuzz:' | awk 'NR % 20 == 1 || /kvconform-fuzz/'
  # Inputs that add coverage go into the committed corpus (review and commit them).
  before=$(ls "$here/corpus/$t" | wc -l)
  "$bin/$t" -merge=1 "$here/corpus/$t" "$work/corpus" >"$work/merge.log" 2>&1
  echo "   corpus: $before -> $(ls "$here/corpus/$t" | wc -l) inputs after merging new coverage"
  for crash in "$work"/crashes/crash-*; do
    [ -e "$crash" ] || continue
    KVCONFORM_FUZZ_ARTIFACTS=$work/crashes "$bin/$t" "$crash" 2>&1 | grep -E '^kvconform-fuzz:|^trace:' | sed 's/^/   /'
  done
  traces=$(ls "$work"/crashes/*.json 2>/dev/null | wc -l)
  echo "   crash traces: $traces in $work/crashes (replay with kvconform replay)"
done
