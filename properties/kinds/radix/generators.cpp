// RapidCheck stateful generation for the radix kind: lookups, admits and chunks of several requests interleaved.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "oracle/models/radix_model.h"
#include "properties/generate/commands.h"
#include "properties/generate/pool_speculation.h"
#include "properties/kinds/prefix/phase_generation.h"
#include "properties/kinds/radix/parts.h"

namespace kvconform::kinds {

namespace {
using namespace prefix_generation;
using radix_command = pool_command<radix_model>;

rc::Gen<radix_command> op_gen(const prefix_mix& mix, const radix_model& m, const gen_context& ctx) {
  if (auto start = long_start(m, ctx)) return *start;
  pool_choices<radix_model> c;
  add_sequence_ops(c, mix, m, ctx.can_decode, ctx.src);
  if (!m.live().empty()) add_appends(c, mix, m.live().size(), m.config().block_size, ctx.src);
  phase_mix phases = mix.phases;
  if (ctx.long_case) phases.step = 0;  // a long case's few ops after its bulk append, as every kind's (shapes.h)
  add_phase_ops(c, phases, m, ctx);
  add_token_speculation(c, mix.speculation, ctx);
  return weighted(std::move(c));
}

/// The most rows of a long case's pool (the model keys pages by their whole token prefix).
constexpr std::size_t long_radix_rows = 1024;

/// Small pools of SGLang's page sizes, so that they run dry within a short trace.
config_gens config_gen(bool long_traces, bool deep) {
  const std::size_t max_blocks = deep ? 24 : (long_traces ? 10 : 7);
  auto make = [](std::size_t blocks, std::size_t page, std::size_t dk, std::size_t dv) {
    cache_config c{cache_kind::radix, blocks, dk, dv};
    c.block_size = page;
    return c;
  };
  const auto pages = rc::gen::element<std::size_t>(1, 2, 4, 16);
  return {rc::gen::apply(make, uniform_in<std::size_t>(3, max_blocks + 1), pages, width_gen(deep), width_gen(deep)),
          rc::gen::apply(
              [make](std::size_t rows, std::size_t page, std::size_t dk, std::size_t dv) {
                return make(std::max<std::size_t>(std::min(rows, long_radix_rows) / page, 2), page, dk, dv);
              },
              long_rows_gen(), rc::gen::element<std::size_t>(4, 16), long_width_gen(), long_width_gen())};
}
}  // namespace

case_generator radix_cases(prefix_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    const double trace_scale = mix.trace * (p.long_traces ? 2 : 1);
    return run_commands<radix_model>(
        p, impl, o, config_gen(p.long_traces, o.deep),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return radix_model(c, prof, pol);
        },
        [mix](const radix_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); }, trace_scale,
        o.deep ? 0 : quick_max_commands);
  };
}

}  // namespace kvconform::kinds
