#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: uses $CC $CXX $CFLAGS $CXXFLAGS $LIB_FUZZING_ENGINE $SRC $OUT.
src=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}/kvconform
[ -d "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)
build=${WORK:-/tmp}/kvconform-fuzz-build
# quadmath.h lives in GCC's own include folder, which clang does not search by itself.
gcc_include=$(ls -d /usr/lib/gcc/x86_64-linux-gnu/*/include 2>/dev/null | sort -V | tail -1)
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS ${gcc_include:+-idirafter $gcc_include}" \
  -DKVCONFORM_BUILD_TESTS=OFF -DKVCONFORM_FUZZ_ENGINE=ON -DKVCONFORM_FUZZ_LINK="$LIB_FUZZING_ENGINE"
cmake --build "$build" -j"$(nproc)" --target kvconform_fuzz_targets
# The target list is fuzz/CMakeLists.txt's, written into the build.
while read -r t; do
  cp "$build/fuzz/$t" "$OUT/"
  (cd "$src/fuzz/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  cp "$src/fuzz/$t.dict" "$src/fuzz/$t.options" "$OUT/"
done <"$build/fuzz/fuzz_targets.txt"
