# The Python port library's unit tests, and its digest against the C++ one (properties/trace/digest.cpp) on rows with
# every kind of double (signed zeros, subnormals, infinities, NaN, random bit patterns) and signed positions.
# Usage: port_python_library.sh KVCONFORM ROOT BUILD (the build folder, for its generated headers)
source "$(dirname "$0")/port_python_lib.sh"
(cd "$ex" && "$py" -m unittest discover -s tests -t . 2>&1) >unit.txt || { cat unit.txt >&2; fail "unit tests"; }
grep -q "^OK" unit.txt || { cat unit.txt >&2; fail "no unit test ran"; }
cat >digest_main.cpp <<'CPP'
// Reads streams (rows d_k d_v P, then keys and values as hexadecimal bit patterns, then positions) and prints digests.
#include <bit>
#include <cstdint>
#include <iostream>
#include <vector>

#include "properties/trace/digest.h"

int main() {
  kvconform::stream s;
  std::size_t rows, positions;
  while (std::cin >> std::dec >> rows >> s.d_k >> s.d_v >> positions) {
    std::vector<double> keys(rows * s.d_k), values(rows * s.d_v);
    s.positions.resize(positions);
    std::uint64_t bits;
    for (double& x : keys) std::cin >> std::hex >> bits, x = std::bit_cast<double>(bits);
    for (double& x : values) std::cin >> std::hex >> bits, x = std::bit_cast<double>(bits);
    s.keys = std::move(keys), s.values = std::move(values);
    for (std::int64_t& p : s.positions) std::cin >> std::dec >> p;
    std::cout << kvconform::digest_hex(kvconform::stream_digest(s)) << "\n";
  }
}
CPP
g++ -std=c++20 -O1 -I "$root/include" -I "$root" -I "$3/generated" digest_main.cpp "$root/properties/trace/digest.cpp" \
  -o digest_main 2>compile.txt || { cat compile.txt >&2; fail "cannot compile the C++ digest"; }
PYTHONPATH=$ex "$py" - <<'PY' || fail "the Python and C++ digests differ"
import random, struct, subprocess
import numpy as np
from kvconform_port import stream_digest
rng = random.Random(11)
specials = [0.0, -0.0, 5e-324, -2.2250738585072014e-308, float("inf"), -float("inf"), float("nan"), 1.0, -1.5]
lines, want = [], []
for case in range(300):
    rows, d_k, d_v = rng.randrange(0, 6), rng.randrange(1, 5), rng.randrange(1, 5)
    def draw():
        return rng.choice(specials) if rng.random() < 0.3 else struct.unpack("<d", rng.randbytes(8))[0]
    keys = np.array([draw() for _ in range(rows * d_k)]).reshape(rows, d_k)
    values = np.array([draw() for _ in range(rows * d_v)]).reshape(rows, d_v)
    positions = [rng.randrange(-(1 << 63), 1 << 63) for _ in range(rows)] if case % 2 else []
    words = [f"{w:x}" for w in np.concatenate([keys.ravel(), values.ravel()]).view(np.uint64).tolist()]
    lines.append(" ".join([str(rows), str(d_k), str(d_v), str(len(positions))] + words + [str(p) for p in positions]))
    want.append(stream_digest(keys, values, positions))
got = subprocess.run(["./digest_main"], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
got = got.stdout.split()
assert len(got) == len(want), (len(got), len(want))
bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
assert not bad, bad[:5]
print(len(want), "digests equal; the protocol's test value:", stream_digest(np.array([[1.0]]), np.array([[-0.0]])))
PY
