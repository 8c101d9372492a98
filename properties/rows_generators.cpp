// RapidCheck stateful generation for the single-sequence kinds (flat, ring).
#include <algorithm>
#include <memory>

#include "oracle/rows_model.h"
#include "properties/rc_runner.h"

namespace kvconform {

namespace {
using rows_command = command_ptr<rows_model>;

/// `ranks` picks, for a one-step append, 1-D or one-row 2-D for k (bit 0) and v (bit 1)
/// independently: mixed ranks are valid (both are one step).
op append_op(const row_source& src, std::int64_t first, std::size_t n, int ranks, std::uint64_t seed) {
  op o;
  o.kind = op_kind::append;
  src.rows(first, n, seed, o.k.data, o.v.data);
  o.k.shape = {n, src.d_k()}, o.v.shape = {n, src.d_v()};
  if (n == 1 && (ranks & 1)) o.k.shape = {src.d_k()};
  if (n == 1 && (ranks & 2)) o.v.shape = {src.d_v()};
  return o;
}

/// The state the generator needs, copied: RapidCheck keeps generators alive while shrinking.
struct gen_state {
  std::shared_ptr<const row_source> src;
  cache_config config;
  std::size_t size = 0;
  std::int64_t total = 0;
  std::size_t max_steps = 4;
};

rc::Gen<rows_command> append_gen(const gen_state& s, rc::Gen<std::size_t> steps) {
  return rc::gen::apply(
      [s](std::size_t n, int ranks, std::uint64_t seed) {
        return command<rows_model>(append_op(*s.src, s.total, n, ranks, seed));
      },
      std::move(steps), uniform_in(0, 4), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rows_command> bad_shape_gen(const gen_state& s) {
  return rc::gen::apply(
      [s](int variant, std::uint64_t seed) {
        const std::size_t dk = s.config.d_k, dv = s.config.d_v;
        op o = append_op(*s.src, s.total, 2, 0, seed);
        switch (variant) {
          case 0: o.k.shape = {1, 2 * dk}; break;                                      // wrong key width
          case 1: o.v.shape = {1, 2 * dv}; break;                                      // wrong value width
          case 2: o.v.shape = {1, dv}, o.v.data.resize(dv); break;                     // 2 key steps, 1 value step
          case 3: o.k.shape = {1, 2, dk}, o.v.shape = {1, 2, dv}; break;               // rank 3
          case 4: o.k.shape = {}, o.k.data.resize(1), o.v.shape = {}, o.v.data.resize(1); break;  // rank 0
          default: o.k.shape = {dk}, o.k.data.resize(dk); break;                       // 1-D k, 2-row v
        }
        return command<rows_model>(std::move(o));
      },
      uniform_in(0, 6), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rows_command> decode_gen(const gen_state& s, bool bad) {
  return rc::gen::apply(
      [s, bad](int variant) {
        op o;
        o.kind = op_kind::decode;
        o.q = tensor::vector(s.src->query());
        if (bad && variant == 0) o.q.shape = {1, s.config.d_k};                          // rank 2
        if (bad && variant == 1) o.q.data.push_back(0.5), o.q.shape = {s.config.d_k + 1};  // wrong width
        return command<rows_model>(std::move(o));
      },
      uniform_in(0, 2));
}

/// One op drawn by weight from the property's mix, sized from the model's state.
rc::Gen<rows_command> op_gen(const op_mix& mix, const gen_state& s, bool can_decode) {
  const std::size_t cap = s.config.capacity;
  const std::size_t room = s.config.kind == cache_kind::flat ? cap - s.size : cap;
  std::vector<std::pair<int, rc::Gen<rows_command>>> choices;
  auto add = [&](int weight, rc::Gen<rows_command> g) {
    if (weight > 0) choices.emplace_back(weight, std::move(g));
  };
  add(mix.append, append_gen(s, uniform_in<std::size_t>(1, s.max_steps + 1)));
  if (s.config.kind == cache_kind::flat) {
    add(mix.fill, append_gen(s, rc::gen::just(std::max<std::size_t>(room, 1))));
    add(mix.overfill, append_gen(s, rc::gen::map(uniform_in<std::size_t>(1, 4), [room](std::size_t extra) { return room + extra; })));
  } else {  // ring: appends of about the window, crossing the wrap point, and n > W
    const std::size_t to_wrap = cap - static_cast<std::size_t>(s.total % static_cast<std::int64_t>(cap));
    add(mix.fill, append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap, to_wrap, cap > 1 ? cap - 1 : 1, cap + 1})));
    add(mix.overfill, append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap + 1, 2 * cap + 1, 3 * cap})));
  }
  add(mix.empty, append_gen(s, rc::gen::just<std::size_t>(0)));
  add(mix.bad_shape, bad_shape_gen(s));
  if (can_decode) {
    add(mix.decode, decode_gen(s, false));
    add(mix.bad_decode, decode_gen(s, true));
  }
  return weighted(std::move(choices));
}

rc::Gen<cache_config> config_gen(cache_kind kind, bool long_traces, bool deep) {
  static const std::vector<std::size_t> quick_dims = {1, 2, 3, 4, 8, 16}, deep_dims = {1, 2, 3, 4, 5, 8, 16, 64, 128};
  const std::vector<std::size_t>& dims = deep ? deep_dims : quick_dims;
  const std::size_t max_cap = deep ? 300 : (long_traces ? 24 : 10);
  // Picking by index (not elementOf) lets a failing case shrink towards the smallest dimension.
  const auto dim = rc::gen::map(uniform_in<std::size_t>(0, dims.size()), [&dims](std::size_t i) { return dims[i]; });
  return rc::gen::apply([kind](std::size_t cap, std::size_t dk, std::size_t dv) { return cache_config{kind, cap, dk, dv}; },
                        uniform_in<std::size_t>(1, max_cap + 1), dim, dim);
}

}  // namespace

property_run run_rows_property(const property& p, const implementation& impl, const run_options& o) {
  return run_commands<rows_model>(
      p, impl, o, config_gen(impl.kind, p.long_traces, o.deep),
      [](const cache_config& c, const numeric_profile& prof) { return rows_model(c, prof); },
      [](const rows_model& m, const gen_context& ctx) {
        return op_gen(ctx.mix, gen_state{ctx.src, m.config(), m.size(), m.total(), ctx.max_steps}, ctx.can_decode);
      });
}

}  // namespace kvconform
