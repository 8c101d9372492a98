// The parts of the latent kind that its sources share: its op builders, generators and fuzz strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/op_builders.h"
#include "properties/generate/property.h"
#include "properties/kinds/paged/parts.h"

namespace kvconform::kinds {

/// DeepSeek-V3's latent and rotary widths, which the production cases of the property that decodes most draw (its
/// mix's decode weight at least deepseek_decodes: latent_decode_heads): a production decode costs a second of
/// materialising, and four properties drawing them doubled the kind's quick gate.
inline constexpr std::size_t deepseek_latent = 512, deepseek_rotary = 64;
inline constexpr int deepseek_decodes = 5;

/// An append of n rows of the target's class, as wide as its keys (d_c + d_r) and without v.
op latent_append_op(const op_target& t, std::size_t n, int ranks, std::uint64_t seed);
/// A malformed append, variant in [0, 6): twice the width, one entry too many (1-D), rank 3, rank 0, one entry
/// short, or the latent part alone (no k_r).
op latent_bad_shape_op(const op_target& t, int variant, std::uint64_t seed);
/// A decode whose every head folds the class's query: head h's W_uk maps its own q_nope onto the query's latent part
/// (docs/kinds/latent.md), q_r is the query's rotary part, the projections are unit, thousand-fold or spiked by
/// `seed`. Hq, d_nope and d_vh follow from the class's query (one shape per trace) and, over DeepSeek-V3's rows, the
/// profile (`deep`). With `bad`, variant 0 gives q of rank 1, variant 1 W_uk of another latent width.
op latent_decode_op(const op_target& t, bool bad, int variant, std::uint64_t seed = 0, bool deep = false);

/// The append `append` made a prefill of its steps: every step's heads are those of a decode of the same sequence
/// (latent_decode_op, its projections drawn from the append's rows), so that each step's absorbed query is the class's.
op latent_prefill_op(op append, const std::shared_ptr<const row_source>& src, bool deep = false);

case_generator latent_cases(paged_mix mix);
void add_latent_properties(std::vector<property>& ps);
void latent_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> latent_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
