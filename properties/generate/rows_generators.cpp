// RapidCheck stateful generation for the rows family (flat, ring, growing).
#include <algorithm>
#include <cstdint>
#include <memory>

#include "properties/generate/commands.h"
#include "properties/generate/op_builders.h"
#include "properties/generate/rows_generators.h"
#include "properties/generate/statements.h"

namespace kvconform {

namespace {
using rows_command = command_ptr<rows_model>;

/// The state the generator needs, copied: RapidCheck keeps generators alive while shrinking.
struct gen_state {
  std::shared_ptr<const row_source> src;
  cache_config config;
  rows_model::full rule;
  std::size_t size = 0;
  std::int64_t total = 0;
  std::size_t max_steps = 4;
  bool long_case = false;
  std::size_t drafts = 0;  // the steps of the last op, when it was an accepted prefill
  op_target target(std::int64_t ahead = 0) const { return {src, total + ahead, 0}; }
};

rc::Gen<rows_command> append_gen(const gen_state& s, rc::Gen<std::size_t> steps) {
  return rc::gen::apply(
      [t = s.target()](std::size_t n, int ranks, std::uint64_t seed) {
        return command<rows_model>(append_op(t, n, ranks, seed));
      },
      std::move(steps), uniform_in(0, 4), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rows_command> bad_shape_gen(const gen_state& s) {
  return rc::gen::apply(
      [t = s.target()](int variant, std::uint64_t seed) { return command<rows_model>(bad_shape_op(t, variant, seed)); },
      uniform_in(0, 6), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rows_command> prefill_gen(const gen_state& s, rc::Gen<std::size_t> steps) {
  return rc::gen::apply(
      [t = s.target()](std::size_t n, std::uint64_t seed) { return command<rows_model>(prefill_op(t, n, seed)); },
      std::move(steps), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rows_command> rollback_gen(const gen_state& s, std::vector<std::int64_t> counts) {
  return rc::gen::map(rc::gen::elementOf(std::move(counts)),
                      [t = s.target()](std::int64_t n) { return command<rows_model>(rollback_op(t, n)); });
}

/// A speculative round (docs/kinds/flat.md): k drafts verified by one prefill, j of them accepted, the other
/// k - j rolled back (for odd seeds in two rollbacks in a row, the last draft first), then the bonus step appended
/// where the first rejected draft was.
rc::Gen<rows_command> round_gen(const gen_state& s) {
  // Up to 8 drafts and the rest, as engines draft (a long case's max_steps would verify thousands at once).
  return rc::gen::mapcat(uniform_in<std::size_t>(1, std::min<std::size_t>(s.max_steps, 8) + 2), [s](std::size_t k) {
    return rc::gen::apply(
        [s, k](std::size_t j, std::uint64_t seed) {
          const auto rejected = static_cast<std::int64_t>(k - j);
          std::vector<op> ops{prefill_op(s.target(), k, seed)};
          if (seed % 2 && rejected > 0) ops.push_back(rollback_op(s.target(), 1));
          ops.push_back(rollback_op(s.target(), seed % 2 && rejected > 0 ? rejected - 1 : rejected));
          ops.push_back(append_op(s.target(static_cast<std::int64_t>(j)), 1, 0, seed + 1));
          return command<rows_model>(std::move(ops));
        },
        uniform_in<std::size_t>(0, k + 1), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
  });
}

/// The most steps a generated prefill has.
constexpr std::size_t max_prefill_steps = 64;

/// Prefill sizes: 1, 2, a few, and at the capacity's edge (the room, one more) or about the window (W, W + 1).
/// Without overfill in the mix a flat cache's prefills fit (a rewrite in chunks would accept some of a refused one).
std::vector<std::size_t> prefill_sizes(const gen_state& s, std::size_t room, bool overfill) {
  const std::size_t cap = s.config.capacity;
  std::vector<std::size_t> sizes;
  if (s.rule == rows_model::full::refuse && !overfill) {
    sizes = {1, 2, s.max_steps, room};
    std::erase_if(sizes, [room](std::size_t n) { return n > room || n == 0; });
    if (sizes.empty()) return {0};
  } else if (s.rule == rows_model::full::refuse) {
    sizes = {1, 2, s.max_steps, std::max<std::size_t>(room, 1), room + 1};
  } else {
    sizes = {1, 2, s.max_steps, cap, cap + 1, 2 * cap + 1};
  }
  // A prefill of m steps over n rows poses m problems of n rows each: past max_prefill_steps the oracle's m x n
  // work would dominate a deep run (docs/performance.md §6); the windows and capacities below it keep every edge.
  for (std::size_t& n : sizes) n = std::min(n, max_prefill_steps);
  return sizes;
}

/// Rollback counts: none, one, the drafts just verified, every held row, and a full window's reserve.
std::vector<std::int64_t> rollback_counts(const gen_state& s, bool bad) {
  const auto size = static_cast<std::int64_t>(s.size), reserve = static_cast<std::int64_t>(s.config.reserve);
  if (bad) return {size + 1, reserve + 1, -1};
  std::vector<std::int64_t> c{0, std::min<std::int64_t>(1, size), static_cast<std::int64_t>(s.drafts), size};
  if (s.rule == rows_model::full::evict) c.push_back(std::min(reserve, size));
  return c;
}

rc::Gen<rows_command> decode_gen(const gen_state& s, bool bad) {
  return rc::gen::map(uniform_in(0, 2),
                      [t = s.target(), bad](int variant) { return command<rows_model>(decode_op(t, bad, variant)); });
}

/// One op drawn by weight from the property's mix, sized from the model's state. A long case
/// starts with one bulk append of most of the room (at least 7/8 of it).
rc::Gen<rows_command> op_gen(const rows_mix& mix, const gen_state& s, bool can_decode, capability_set caps) {
  const std::size_t cap = s.config.capacity;
  const bool refuses = s.rule == rows_model::full::refuse;
  const std::size_t room = refuses ? cap - s.size : cap;
  if (s.long_case && s.total == 0)
    return rc::gen::apply(
        [t = s.target()](std::size_t n, std::uint64_t seed) { return command<rows_model>(append_op(t, n, 0, seed)); },
        long_fill_gen(room), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
  std::vector<std::pair<int, rc::Gen<rows_command>>> choices;
  auto add = [&](int weight, rc::Gen<rows_command> g) {
    if (weight > 0) choices.emplace_back(weight, std::move(g));
  };
  add(mix.append, append_gen(s, uniform_in<std::size_t>(1, s.max_steps + 1)));
  if (refuses) {
    add(mix.fill, append_gen(s, rc::gen::just(std::max<std::size_t>(room, 1))));
    add(mix.overfill,
        append_gen(s, rc::gen::map(uniform_in<std::size_t>(1, 4), [room](std::size_t extra) { return room + extra; })));
  } else {  // a window: appends of about its size, to the end of the sinks or the wrap point, and n > W
    const auto keep = static_cast<std::int64_t>(s.config.keep), part = static_cast<std::int64_t>(cap) - keep;
    const auto to_wrap = static_cast<std::size_t>(s.total < keep ? keep - s.total : part - (s.total - keep) % part);
    add(mix.fill,
        append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap, to_wrap, cap > 1 ? cap - 1 : 1, cap + 1})));
    add(mix.overfill, append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap + 1, 2 * cap + 1, 3 * cap})));
  }
  add(mix.empty, append_gen(s, rc::gen::just<std::size_t>(0)));
  add(mix.bad_shape, bad_shape_gen(s));
  if (can_decode) {
    add(mix.decode, decode_gen(s, false));
    add(mix.bad_decode, decode_gen(s, true));
  }
  if (caps.has(capability::prefill))
    add(mix.prefill, prefill_gen(s, rc::gen::elementOf(prefill_sizes(s, room, mix.overfill > 0))));
  if (caps.has(capability::rollback)) {
    add(mix.rollback, rollback_gen(s, rollback_counts(s, false)));
    add(mix.bad_rollback, rollback_gen(s, rollback_counts(s, true)));
  }
  if (caps.has(capability::prefill) && caps.has(capability::rollback)) add(mix.round, round_gen(s));
  if (choices.empty()) add(1, append_gen(s, rc::gen::just<std::size_t>(0)));  // a mix of ops this cache lacks
  return weighted(std::move(choices));
}

/// Capacities (windows, growth steps) up to 10, 24 for long traces, 300 deep; a long case's from
/// long_rows_min to long_rows_max, with narrow rows (shapes.h).
config_gens config_gen(cache_kind kind, bool long_traces, bool deep) {
  const std::size_t max_cap = deep ? 300 : (long_traces ? 24 : 10);
  auto make = [kind](std::size_t cap, std::size_t dk, std::size_t dv) { return cache_config{kind, cap, dk, dv}; };
  return {rc::gen::apply(make, uniform_in<std::size_t>(1, max_cap + 1), width_gen(deep), width_gen(deep)),
          rc::gen::apply(make, long_rows_gen(), long_width_gen(), long_width_gen())};
}

/// A config with attention sinks half the time, for implementations that have them: keep in [1, W),
/// at most `most` (a long window keeps as few as models do, StreamingLLM's 4: every eviction moves
/// the sinks in the model).
rc::Gen<cache_config> sinks_of(rc::Gen<cache_config> configs, std::size_t most) {
  return rc::gen::mapcat(std::move(configs), [most](cache_config c) {
    if (c.capacity < 2) return rc::gen::just(c);
    return rc::gen::map(
        rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(1, std::min(c.capacity - 1, most) + 1)),
        [c](std::size_t keep) {
          cache_config k = c;
          k.keep = keep;
          return k;
        });
  });
}
config_gens with_sinks(config_gens c) {
  return {sinks_of(std::move(c.ordinary), SIZE_MAX), sinks_of(std::move(c.long_shapes), 4)};
}

/// A window that rolls back gets a reserve of 0 to 6 rows, about a speculative round's drafts (without one, a
/// rollback is refused once the window has evicted).
rc::Gen<cache_config> reserve_of(rc::Gen<cache_config> configs) {
  return rc::gen::mapcat(std::move(configs), [](cache_config c) {
    return rc::gen::map(uniform_in<std::size_t>(0, 7), [c](std::size_t reserve) {
      cache_config r = c;
      r.reserve = reserve;
      return r;
    });
  });
}

/// Capacities past a declared window or chunk of `span` rows (docs/numerics.md §7.2): each drawn capacity plus the
/// span, so that every trace can hold rows the window masks.
config_gens past_span(config_gens c, std::size_t span) {
  auto widen = [span](cache_config k) {
    k.capacity += span;
    return k;
  };
  return {rc::gen::map(std::move(c.ordinary), widen), rc::gen::map(std::move(c.long_shapes), widen)};
}

/// The configs of a rows kind for `impl`: capacities past its declared window and top-k, sinks and a reserve where the
/// implementation takes them (a ring that refuses every rollback once full keeps none: rollback=before_full,
/// docs/kinds/ring.md).
config_gens configs_for(const implementation& impl, const property& p, bool deep) {
  config_gens c = config_gen(impl.kind, p.long_traces, deep);
  if (const std::size_t span = impl.profile.attention.span) c = past_span(std::move(c), span);
  // Past a declared top-k too, so that queries see more rows than they attend (docs/numerics.md §7.4).
  if (const std::size_t k = impl.profile.attention.top_k) c = past_span(std::move(c), 2 * k);
  if (impl.capabilities.has(capability::sinks)) c = with_sinks(std::move(c));
  if (impl.kind == cache_kind::ring && impl.capabilities.has(capability::rollback) &&
      !impl.policies.is("rollback", "before_full"))
    c = {reserve_of(std::move(c.ordinary)), reserve_of(std::move(c.long_shapes))};
  return c;
}

}  // namespace

case_generator rows_cases(rows_model::full rule, rows_mix mix) {
  return [rule, mix](const property& p, const implementation& impl, const run_options& o) {
    return run_commands<rows_model>(
        p, impl, o, configs_for(impl, p, o.deep),
        [rule](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return rows_model(c, prof, rule, pol);
        },
        [rule, mix](const rows_model& m, const gen_context& ctx) {
          return op_gen(
              mix, gen_state{ctx.src, m.config(), rule, m.size(), m.total(), ctx.max_steps, ctx.long_case, m.drafts()},
              ctx.can_decode, ctx.caps);
        });
  };
}

void add_rows_statements(std::vector<property>& ps, cache_kind kind, rows_model::full rule) {
  add_statements<rows_mix>(ps, kind, [rule](rows_mix m) { return rows_cases(rule, m); }, {});
}

}  // namespace kvconform
