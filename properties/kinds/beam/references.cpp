// The built-in beam references: the f64 cache and its fp16 and bf16 storage (docs/kinds/beam.md).
#include "impls/beam/beam.h"
#include "properties/kinds/beam/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> beam_references() {
  return {reference<beam>(
              "beam", "layers x batch x kv heads, prefill, rollback, reorder, GQA, masks; double, two-pass softmax"),
          reference<beam_stored<formats::fp16>>("beam-fp16", "beam, keys and values stored in fp16"),
          reference<beam_stored<formats::bf16>>("beam-bf16", "beam, keys and values stored in bf16")};
}

}  // namespace kvconform::kinds
