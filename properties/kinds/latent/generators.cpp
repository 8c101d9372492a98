// RapidCheck stateful generation for the latent kind: the paged pool's generation over the latent op builders.
#include "oracle/models/latent_model.h"
#include "properties/kinds/latent/parts.h"
#include "properties/kinds/paged/pool_generation.h"

namespace kvconform::kinds {

namespace {
using namespace pool_generation;

struct latent_build {
  using model = latent_model;
  static op append(const op_target& t, std::size_t n, int ranks, std::uint64_t seed) {
    return latent_append_op(t, n, ranks, seed);
  }
  static op bad_shape(const op_target& t, int variant, std::uint64_t seed) {
    return latent_bad_shape_op(t, variant, seed);
  }
  static op decode(const op_target& t, bool bad, int variant) { return latent_decode_op(t, bad, variant); }
};

/// Pools of up to 16 blocks of up to 4 rows (64 of 16 deep) whose rows have a latent part of the usual widths and a
/// rotary part of 1 to 4 entries (up to d_c / 8 + 1 deep, DeepSeek-V3's ratio); long cases as paged's, narrow.
config_gens config_gen(bool long_traces, bool deep) {
  const std::size_t max_blocks = deep ? 64 : (long_traces ? 32 : 16), max_block_size = deep ? 16 : 4;
  auto make = [](std::size_t blocks, std::size_t block_size, std::size_t d_c, std::size_t d_r) {
    cache_config c{cache_kind::latent, blocks, d_c + d_r, d_c};
    c.block_size = block_size;
    return c;
  };
  auto long_rows = rc::gen::apply(
      [make](std::size_t rows, std::size_t block_size, std::size_t d_c, std::size_t d_r) {
        return make(std::max<std::size_t>(rows / block_size, 1), block_size, d_c, d_r);
      },
      long_rows_gen(), uniform_in<std::size_t>(1, 17), long_width_gen(), long_width_gen());
  return {
      rc::gen::apply(make, uniform_in<std::size_t>(1, max_blocks + 1), uniform_in<std::size_t>(1, max_block_size + 1),
                     width_gen(deep), uniform_in<std::size_t>(1, 5)),
      long_rows};
}
}  // namespace

case_generator latent_cases(paged_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    const double trace_scale = p.long_traces ? 4 : 2;
    return run_commands<latent_model>(
        p, impl, o, config_gen(p.long_traces, o.deep),
        [](const cache_config& c, const numeric_profile& prof) { return latent_model(c, prof); },
        [mix](const latent_model& m, const gen_context& ctx) { return op_gen<latent_build>(mix, m, ctx); },
        trace_scale);
  };
}

}  // namespace kvconform::kinds
