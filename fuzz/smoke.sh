#!/usr/bin/env bash
# CI's fuzz smoke: every fuzz target a few seconds from a copy of its corpus and from nothing; any finding fails it.
# Usage: smoke.sh [SECONDS_PER_RUN] [TARGET...]  (5 s; every target of fuzz_targets.txt by default)
# Exit 0: no finding; 1: a crash, leak, timeout, out-of-memory, hang or other non-zero exit, its input kept in
# KVCONFORM_SMOKE_FAILURES (default build-fuzz/fuzz-smoke-failures) with the command that replays it; 2: usage.
# KVCONFORM_FUZZ_IMPL is passed on: a kind's target then runs on that implementation (a mutant must fail it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
seconds=${1:-5}
[ $# -gt 0 ] && shift
case $seconds in '' | *[!0-9]* | 0) echo "usage: smoke.sh [SECONDS_PER_RUN] [TARGET...]"; exit 2 ;; esac
select_targets "$@" || exit 2
failures=${KVCONFORM_SMOKE_FAILURES:-$fuzz_bin/../fuzz-smoke-failures}
rss_mb=2048
# libFuzzer's own limits (-max_total_time, the .options' 10 s per input, which may start just before the end) do not
# reach everything: loading the corpus, exiting, a handler that never returns. A run 30 s past its time is hung.
deadline=$((seconds + 30))
# libFuzzer stops once the whole seconds since it started exceed -max_total_time: N - 1 is a run of N seconds.
max_total=$((seconds > 1 ? seconds - 1 : 1))

# Everything a run writes (the corpus copy, new inputs, artifacts, traces, the targets' own temporary files) goes
# into one directory, removed however the script ends: the committed corpus is never written to.
work=$(mktemp -d -t kvconform-fuzz-smoke.XXXXXX) || exit 2
child=
stop() {
  # The run is in a process group of its own (timeout's), out of reach of a terminal's Ctrl-C: end it here, by pid.
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  exit "$1"
}
trap 'rm -rf "$work"' EXIT
trap 'stop 130' INT
trap 'stop 143' TERM

# run TARGET LABEL [CORPUS]: one run into $work/TARGET.LABEL; sets rate and cov from libFuzzer's last status line
# and `finding` to what went wrong (empty: nothing).
run() {
  local t=$1 label=$2 dir=$work/$1.$2 status
  mkdir -p "$dir/corpus" "$dir/tmp"
  if [ $# -gt 2 ] && [ -d "$3" ]; then cp -R "$3/." "$dir/corpus/"; fi
  # In the background and waited for, so that a signal interrupts the wait at once and the trap can end the run.
  (cd "$dir" && TMPDIR=$dir/tmp KVCONFORM_FUZZ_ARTIFACTS=$dir exec timeout -k 5 "$deadline" "$fuzz_bin/$t" \
    "${flags[@]}" -max_total_time="$max_total" -rss_limit_mb="$rss_mb" -artifact_prefix="$dir/" "$dir/corpus") \
    >"$dir/log" 2>&1 &
  child=$!
  wait "$child"
  status=$?
  child=
  local last
  last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1)
  rate=$(sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  rate=${rate:--} cov=${cov:--}  # none: it stopped before its first status line (a crash of a corpus input)
  finding=
  local inputs
  inputs=$(cd "$dir" && ls -d crash-* leak-* timeout-* oom-* 2>/dev/null)
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    finding="hung: still running ${deadline}s after it started"
  elif [ -n "$inputs" ]; then
    finding=$(echo "$inputs" | sed 's/-.*//' | sort -u | paste -sd ' ')
  elif [ "$status" -ne 0 ]; then
    finding="exit status $status"
  fi
  [ -z "$finding" ] && return 0
  keep "$t" "$label" "$dir" "$inputs"
}

# keep TARGET LABEL DIR INPUTS: copies the run's log, artifacts and traces where they outlive the script, and says
# how to replay them.
keep() {
  mkdir -p "$failures" && failures=$(cd "$failures" && pwd) || { echo "cannot write $failures"; return; }
  local dest=$failures/$1.$2 input trace
  rm -rf "$dest" && mkdir -p "$dest" || { echo "cannot write $dest"; return; }
  cp "$3/log" "$dest/fuzz.log"
  for input in $4; do cp "$3/$input" "$dest/"; done
  cp "$3"/kvconform-*.json "$dest/" 2>/dev/null
  echo "FAIL $1 ($2): $finding"
  grep -E '^kvconform-fuzz:|^SUMMARY:' "$dest/fuzz.log" | head -2 | sed 's/^/  /'
  echo "  log and inputs: $dest"
  local impl=${KVCONFORM_FUZZ_IMPL:+KVCONFORM_FUZZ_IMPL=$KVCONFORM_FUZZ_IMPL }
  for input in $4; do echo "  replay: $impl$fuzz_bin/$1 $dest/$input"; done
  for trace in "$dest"/kvconform-*.json; do [ -e "$trace" ] && echo "  trace: kvconform replay $trace"; done
}

failed=()
start=$SECONDS
for t in "${targets[@]}"; do
  target_flags "$t"
  run "$t" corpus "$here/corpus/$t"
  from_corpus="$rate exec/s, cov $cov" bad=$finding
  run "$t" empty
  from_empty="$rate exec/s, cov $cov"
  bad+=$finding
  result=PASS
  [ -n "$bad" ] && result=FAIL failed+=("$t")
  printf '%-20s from corpus: %-24s from empty: %-24s %s\n' "$t" "$from_corpus" "$from_empty" "$result"
  rm -rf "${work:?}"/*  # a corpus copy per target is enough
done
echo "fuzz smoke: ${#targets[@]} targets, ${seconds}s per run, $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (findings in $failures)"
  exit 1
fi
