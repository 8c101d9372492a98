// RapidCheck stateful generation for the latent kind: the paged pool's generation over the latent op builders.
#include "oracle/models/latent_model.h"
#include "properties/kinds/latent/parts.h"
#include "properties/kinds/paged/pool_generation.h"

namespace kvconform::kinds {

namespace {
using namespace pool_generation;

/// The latent op builders, decodes of `Deep`'s head counts.
template <bool Deep>
struct latent_build {
  using model = latent_model;
  static op append(const op_target& t, std::size_t n, int ranks, std::uint64_t seed) {
    return latent_append_op(t, n, ranks, seed);
  }
  static op bad_shape(const op_target& t, int variant, std::uint64_t seed) {
    return latent_bad_shape_op(t, variant, seed);
  }
  static op decode(const op_target& t, bool bad, int variant) { return latent_decode_op(t, bad, variant, 0, Deep); }
  static op prefill(op append, const std::shared_ptr<const row_source>& src) {
    return latent_prefill_op(std::move(append), src, Deep);
  }
};

/// Pools of up to 16 blocks of up to 4 rows (64 of 16 deep) whose rows have a latent part of the usual widths and a
/// rotary part of 1 to 4 entries; with `deepseek`, a production case (shapes.h) has DeepSeek-V3's rows, d_c 512 and
/// d_r 64, in a pool of up to 4 blocks of up to 4 rows (few rows: each decode materialises every head in
/// double-double); long cases as paged's, with rows of at most 4 entries (one rotary). With integer groups of
/// `group` along the rows, d_c is a multiple of it.
config_gens config_gen(bool long_traces, bool deep, bool deepseek, std::size_t group) {
  const std::size_t max_blocks = deep ? 64 : (long_traces ? 32 : 16), max_block_size = deep ? 16 : 4;
  auto make = [group](std::size_t blocks, std::size_t block_size, std::size_t d_c, std::size_t d_r) {
    // Integer groups: a value row is its key row's first groups, whole: one (a head materialises n x d_nope x d_c
    // products, and two groups made the int8 reference's prefill properties about twice as slow), or where the drawn
    // width is a multiple, as many as it holds (DeepSeek-V3's 512, the deep profile's wide rows).
    if (d_c % group != 0) d_c = group;
    cache_config c{cache_kind::latent, blocks, d_c + d_r, d_c};
    c.block_size = block_size;
    return c;
  };
  auto long_rows = rc::gen::apply(
      [make](std::size_t rows, std::size_t block_size, std::size_t d_c, std::size_t d_r) {
        return make(std::max<std::size_t>(rows / block_size, 1), block_size, d_c, d_r);
      },
      long_rows_gen(), uniform_in<std::size_t>(1, 17), uniform_in<std::size_t>(1, 4), rc::gen::just<std::size_t>(1));
  auto ordinary =
      rc::gen::apply(make, uniform_in<std::size_t>(1, max_blocks + 1), uniform_in<std::size_t>(1, max_block_size + 1),
                     width_gen(deep), uniform_in<std::size_t>(1, 5));
  auto production = rc::gen::apply(
      [make](std::size_t blocks, std::size_t block_size) {
        return make(blocks, block_size, deepseek_latent, deepseek_rotary);
      },
      uniform_in<std::size_t>(1, 5), uniform_in<std::size_t>(1, 5));
  if (!deepseek) return {ordinary, long_rows};
  // A production case shrinks towards an ordinary config: a failure that shows on small rows too is saved as a trace
  // of a few thousand values, not of the two million a DeepSeek-V3 decode's projections take.
  auto shrinking = rc::gen::mapcat(uniform_in(0, 8),  // 0, where it shrinks to: ordinary
                                   [ordinary, production](int i) { return i > 0 ? production : ordinary; });
  return {rc::gen::withSize([ordinary, shrinking](int size) { return production_case(size) ? shrinking : ordinary; }),
          long_rows};
}
}  // namespace

case_generator latent_cases(paged_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    const double trace_scale = p.long_traces ? 4 : 2;
    return run_commands<latent_model>(
        p, impl, o,
        config_gen(p.long_traces, o.deep, mix.decode >= deepseek_decodes,
                   impl.profile.keys.groups ? impl.profile.keys.group : 1),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return latent_model(c, prof, pol, false);
        },
        [mix, deep = o.deep](const latent_model& m, const gen_context& ctx) {
          return deep ? op_gen<latent_build<true>>(mix, m, ctx) : op_gen<latent_build<false>>(mix, m, ctx);
        },
        trace_scale);
  };
}

}  // namespace kvconform::kinds
