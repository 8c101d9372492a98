// The built-in ring references: the f64 window with sinks and its q8_0 storage (docs/kinds/ring.md).
#include "impls/ring/declared.h"
#include "impls/ring/ring.h"
#include "properties/kinds/ring/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> ring_references() {
  return {
      reference<ring>("ring", "sliding window of W rows with optional sinks, double, two-pass softmax"),
      reference<ring_stored<formats::q8_0>>("ring-q8_0", "ring, llama.cpp-style q8_0 blocks of 32"),
      reference<ring_gpt_oss>("ring-gpt-oss", "ring, gpt-oss's sliding layer: every decode with a learned sink"),
  };
}

}  // namespace kvconform::kinds
