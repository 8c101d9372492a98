// The built-in flat references: the f64 cache and one per storage format (docs/kinds/flat.md).
#include "impls/flat/flat.h"
#include "impls/flat/variants/declared_attention.h"
#include "impls/flat/variants/declared_sparse.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> flat_references() {
  return {
      reference<flat>("flat", "fixed-capacity cache, double, two-pass softmax"),
      reference<flat_stored<formats::f32>>("flat-f32-storage", "flat, keys and values stored in f32"),
      reference<flat_stored<formats::fp16>>("flat-fp16", "flat, keys and values stored in fp16"),
      reference<flat_stored<formats::bf16>>("flat-bf16", "flat, keys and values stored in bf16"),
      reference<flat_stored<formats::e4m3>>("flat-e4m3", "flat, keys and values stored in fp8 e4m3 (NaN on overflow)"),
      reference<flat_stored<formats::e5m2>>("flat-e5m2", "flat, keys and values stored in fp8 e5m2"),
      reference<flat_stored<formats::q8_0>>("flat-q8_0", "flat, llama.cpp-style q8_0 blocks of 32"),
      reference<flat_stored<formats::q4_1>>("flat-q4_1", "flat, llama.cpp-style q4_1 blocks of 32 with a minimum"),
      reference<flat_stored<kivi_keys, kivi_values>>("flat-kivi",
                                                     "flat, KIVI-style int4: keys per channel, values per "
                                                     "token, fp16 residual of 8 tokens"),
      reference<flat_declared<declared::sinks_sliding>>("flat-sinks-sliding",
                                                        "flat, gpt-oss-style learned sinks on a sliding window of 8"),
      reference<flat_declared<declared::chunked>>("flat-chunked", "flat, Llama 4-style chunked-local attention of 8"),
      reference<flat_declared<declared::softcap>>("flat-softcap", "flat, Gemma 2-style logit soft cap at 30"),
      reference<flat_sparse<declared::dsa>>("flat-dsa",
                                            "flat, DeepSeek V3.2-style top-4 by a 2-head indexer over a block-planar "
                                            "fp8 index cache"),
  };
}

}  // namespace kvconform::kinds
