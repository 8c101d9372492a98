// RapidCheck stateful generation for the paged kind: the pool generation over the shared builders, its configs.
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/models/paged_model.h"
#include "properties/kinds/paged/pool_generation.h"

namespace kvconform::kinds {

namespace {
using namespace pool_generation;

/// The paged kind's ops: the shared builders as they are.
struct paged_build {
  using model = paged_model;
  static op append(const op_target& t, std::size_t n, int ranks, std::uint64_t seed) {
    return append_op(t, n, ranks, seed);
  }
  static op bad_shape(const op_target& t, int variant, std::uint64_t seed) { return bad_shape_op(t, variant, seed); }
  static op decode(const op_target& t, bool bad, int variant) { return decode_op(t, bad, variant); }
};

/// Pools of up to 16 blocks of up to 4 rows (32 blocks for long traces; 64 of 16 deep). A long
/// case's pool holds long_rows_min to long_rows_max rows in blocks of up to 16, or with `huge` is
/// 2^16 + 1 to 2^16 + 64 one-row blocks; its rows are narrow (shapes.h).
config_gens config_gen(bool preempt, bool long_traces, bool deep, bool huge) {
  const std::size_t max_blocks = deep ? 64 : (long_traces ? 32 : 16), max_block_size = deep ? 16 : 4;
  auto make = [preempt](std::size_t blocks, std::size_t block_size, std::size_t dk, std::size_t dv) {
    cache_config c{cache_kind::paged, blocks, dk, dv};
    c.block_size = block_size, c.preempt = preempt;
    return c;
  };
  auto long_rows = rc::gen::apply(
      [make](std::size_t rows, std::size_t block_size, std::size_t dk, std::size_t dv) {
        return make(std::max<std::size_t>(rows / block_size, 1), block_size, dk, dv);
      },
      long_rows_gen(), uniform_in<std::size_t>(1, 17), long_width_gen(), long_width_gen());
  // Rows one wide: the number of blocks is what a huge pool is about, and each row is written, rounded and
  // compared several times.
  auto huge_pool = rc::gen::map(uniform_in<std::size_t>(1, 65),
                                [make](std::size_t extra) { return make(huge_pool_blocks + extra, 1, 1, 1); });
  return {rc::gen::apply(make, uniform_in<std::size_t>(1, max_blocks + 1),
                         uniform_in<std::size_t>(1, max_block_size + 1), width_gen(deep), width_gen(deep)),
          huge ? huge_pool : long_rows};
}

}  // namespace

bool huge_pools(const paged_mix& mix, const implementation& impl) {
  return mix.huge_pools && !impl.profile.rounds_storage();
}

case_generator paged_cases(paged_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    // A property that needs the preempt policy runs every trace with it; the others refuse when the pool is exhausted.
    const bool preempt = p.needs.has(capability::preempt);
    // Several sequences need longer traces than one: to exhaust the pool, fork chains, release and reuse.
    const double trace_scale = p.long_traces ? 4 : 2;
    return run_commands<paged_model>(
        p, impl, o, config_gen(preempt, p.long_traces, o.deep, huge_pools(mix, impl)),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return paged_model(c, prof, pol);
        },
        [mix](const paged_model& m, const gen_context& ctx) { return op_gen<paged_build>(mix, m, ctx); }, trace_scale);
  };
}

}  // namespace kvconform::kinds
