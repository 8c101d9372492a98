#!/usr/bin/env bash
# Runs fuzz/build.sh as OSS-Fuzz would (its variables, a scratch $OUT), then check_build.sh on the result.
set -eu
src=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export CC=clang CXX=clang++ SRC=$scratch/src OUT=$scratch/out WORK=$scratch/work
export CFLAGS="-O1 -gline-tables-only -fsanitize=address,undefined -fsanitize-address-use-after-scope"
CFLAGS+=" -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
mkdir -p "$SRC" "$OUT" "$WORK"
ln -s "$src" "$SRC/kvconform"
bash "$src/fuzz/build.sh" >"$scratch/build.log" 2>&1 || { tail -30 "$scratch/build.log"; exit 1; }
bash "$src/fuzz/check_build.sh" "$OUT"
