#!/usr/bin/env bash
# Each public header (include/kvconform/) compiles on its own, pulls in no RapidCheck, Boost, Eigen or nlohmann,
# and the internal headers it needs are exactly those cmake/internal_headers.txt installs.
# Usage: public_headers.sh SOURCE_ROOT GENERATED_DIR CXX CC
set -euo pipefail
root=$1 generated=$2 cxx=$3 cc=$4
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
flags=(-I"$root/include" -I"$root" -I"$generated")
for header in "$root"/include/kvconform/*.h; do
  name=${header#"$root/"}
  echo "#include <kvconform/$(basename "$header")>" >"$scratch/one.cpp"
  "$cxx" -std=c++20 -Wall -Wextra -Werror -fsyntax-only "${flags[@]}" "$scratch/one.cpp" 2>"$scratch/err.txt" ||
    { cat "$scratch/err.txt" >&2; fail "$name does not compile on its own"; }
  "$cxx" -std=c++20 -M -MT x "${flags[@]}" "$scratch/one.cpp" | tr ' \\' '\n\n' | grep -v '^$' >"$scratch/deps.txt"
  heavy=$(grep -iE 'rapidcheck|boost|eigen|nlohmann' "$scratch/deps.txt" || true)
  [ -z "$heavy" ] || fail "$name pulls in: $(echo "$heavy" | head -3 | tr '\n' ' ')"
  # The internal headers it reaches, as tree paths (the generated ones by their path below the generated folder).
  grep -E "^($root|$generated)/" "$scratch/deps.txt" | grep -v "^$root/include/" |
    sed -e "s#^$generated/##" -e "s#^$root/##" >>"$scratch/internal.txt" || true
done
# The C ABI is plain C.
echo '#include <kvconform/c_port.h>' >"$scratch/one.c"
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$root/include" "$scratch/one.c" ||
  fail "include/kvconform/c_port.h does not compile as C99"
sort -u "$scratch/internal.txt" >"$scratch/needed.txt"
grep -v '^#' "$root/cmake/internal_headers.txt" | sort >"$scratch/listed.txt"
diff -u "$scratch/listed.txt" "$scratch/needed.txt" >"$scratch/diff.txt" ||
  { cat "$scratch/diff.txt" >&2; fail "cmake/internal_headers.txt is not the closure of the public headers (- listed only, + needed only)"; }
echo "public headers: $(ls "$root"/include/kvconform/*.h | wc -l) compile alone, none heavy, $(wc -l <"$scratch/needed.txt") internal headers installed"
