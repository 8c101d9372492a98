# From an empty directory: install kvconform, build examples/consumer against it, run its gate.
source "$(dirname "$0")/lib.sh"
root=$2 build=$3
run 0 cmake --install "$build" --prefix "$scratch/prefix"
run 0 cmake -S "$root/examples/consumer" -B consumer -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo
run 0 cmake --build consumer -j2
run 0 consumer/acme_gate gate
contains out.txt " 0 failed"
grep -qE "^acme-tiny +exact_fill +PASS" out.txt || fail "no exact_fill row for acme-tiny"
run 0 ctest --test-dir consumer --output-on-failure
