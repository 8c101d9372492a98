#!/usr/bin/env bash
# Timed script (not a test): the deep profile through the numpy flat port, observing with digests and in full, run
# alternately in the same conditions; prints the wall time of each, their medians and the ratio.
# Usage: bench/port_digest.sh KVCONFORM [PROPERTY_GLOB] [ROUNDS] [CASES]  (CASES: the deep profile's 1000 if absent)
set -u
kvconform=$1 glob=${2:-*} rounds=${3:-1} cases=()
[ $# -ge 4 ] && cases=(--cases "$4")
root=$(cd "$(dirname "$0")/.." && pwd)
port=$root/examples/python/numpy_port.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq "$rounds"); do
  for mode in digest full; do
    flags=()
    [ "$mode" = full ] && flags=(--no-digest)
    start=$(date +%s.%N)
    "$kvconform" port --kind flat --profile deep --property "$glob" "${cases[@]}" --store "" -- \
      /usr/bin/python3 "$port" \
      "${flags[@]}" >"$work/out" 2>&1 || { cat "$work/out"; exit 1; }
    end=$(date +%s.%N)
    echo "$mode $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') $(tail -1 "$work/out")" |
      tee -a "$work/times"
  done
done
median() { grep "^$1 " "$work/times" | cut -d' ' -f2 | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
d=$(median digest) f=$(median full)
echo "median: digest $d s, full $f s; full / digest: $(awk -v d="$d" -v f="$f" 'BEGIN {printf "%.1f", f / d}')x"
