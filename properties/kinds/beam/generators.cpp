// RapidCheck stateful generation for the beam kind: shapes, updates, prefills, decode steps, rollbacks, reorders,
// masks.
#include <algorithm>
#include <memory>
#include <numeric>
#include <random>

#include "oracle/models/beam_model.h"
#include "properties/generate/commands.h"
#include "properties/kinds/beam/inputs.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {
using beam_command = command_ptr<beam_model>;

/// The state the generator needs, copied: RapidCheck keeps generators alive while shrinking.
struct gen_state {
  std::shared_ptr<const row_source> src;
  cache_config config;
  std::vector<std::size_t> lengths;  // per layer
  std::size_t max_steps = 4;
  bool long_case = false;
};

/// Sets a shape and sizes the data to match, so a deliberately wrong shape still makes a valid trace.
void reshape(tensor& t, std::vector<std::size_t> shape) {
  t.shape = std::move(shape);
  std::size_t n = 1;
  for (std::size_t d : t.shape) n *= d;
  t.data.resize(n, 0.25);
}

op update_op(const gen_state& s, std::int64_t layer, std::int64_t start, std::size_t n, std::uint64_t seed) {
  op o;
  o.kind = op_kind::update;
  o.layer = layer, o.start = start;
  beam_block(*s.src, s.config.batch, s.config.heads, start, n, seed, o.k, o.v);
  return o;
}

/// An update of a generated layer, whose start and step count `make(layer, length)` generates.
template <class Make>
rc::Gen<beam_command> on_layer(const gen_state& s, Make make) {
  return rc::gen::mapcat(uniform_in<std::size_t>(0, s.config.layers), [s, make](std::size_t l) {
    return rc::gen::mapcat(make(l, s.lengths[l]), [s, l](std::pair<std::size_t, std::size_t> start_n) {
      return rc::gen::map(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), [s, l, start_n](std::uint64_t seed) {
        return command<beam_model>(
            update_op(s, static_cast<std::int64_t>(l), static_cast<std::int64_t>(start_n.first), start_n.second, seed));
      });
    });
  });
}

/// (start, n) pairs: at the length with n steps from `steps(room)`.
template <class Steps>
auto at_length(const gen_state& s, Steps steps) {
  return [s, steps](std::size_t, std::size_t len) {
    return rc::gen::map(steps(s.config.capacity - len), [len](std::size_t n) { return std::pair{len, n}; });
  };
}

rc::Gen<beam_command> rollback_gen(const gen_state& s) {
  return on_layer(s, [s](std::size_t, std::size_t len) {
    return rc::gen::mapcat(uniform_in<std::size_t>(0, std::max<std::size_t>(len, 1)), [s](std::size_t start) {
      const std::size_t most = std::min(s.max_steps, s.config.capacity - start);
      return rc::gen::map(uniform_in<std::size_t>(0, most + 1), [start](std::size_t n) { return std::pair{start, n}; });
    });
  });
}

rc::Gen<beam_command> bad_update_gen(const gen_state& s) {
  return rc::gen::apply(
      [s](int variant, std::size_t layer, std::uint64_t seed) {
        const cache_config& c = s.config;
        const std::size_t len = s.lengths[layer];
        op o = update_op(s, static_cast<std::int64_t>(layer), static_cast<std::int64_t>(len), 1, seed);
        switch (variant) {
          case 0: reshape(o.k, {c.batch, c.heads, 1, c.d_k + 1}); break;  // wrong key width
          case 1: reshape(o.v, {c.batch, c.heads + 1, 1, c.d_k}); break;  // wrong value heads
          case 2: reshape(o.k, {c.batch + 1, c.heads, 1, c.d_k}); break;  // wrong batch
          case 3: reshape(o.v, {c.batch, c.heads, 2, c.d_k}); break;      // k and v differ in steps
          case 4: reshape(o.k, {c.batch, c.heads, c.d_k}), reshape(o.v, {c.batch, c.heads, c.d_k}); break;  // rank 3
          case 5: o.layer = static_cast<std::int64_t>(c.layers); break;  // layer out of range
          case 6: o.layer = -1; break;
          case 7: o.start = static_cast<std::int64_t>(len) + 1; break;  // start beyond the length
          default: o.start = -1; break;
        }
        return command<beam_model>(std::move(o));
      },
      uniform_in(0, 9), uniform_in<std::size_t>(0, s.config.layers),
      rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

/// Makes a prefill one the contract refuses, by `variant`: q of one position too many, of query heads that are not a
/// multiple of H, of the wrong width or of the decode's rank; a mask of the layer's length alone; a layer out of
/// range; positions past max_len; k and v of different positions.
void refuse_prefill(const gen_state& s, op& o, int variant, std::uint64_t seed) {
  const cache_config& c = s.config;
  const std::size_t m = o.k.shape[2], len = o.layer < 0 ? 0 : s.lengths[static_cast<std::size_t>(o.layer)];
  switch (variant) {
    case 0: reshape(o.q, {c.batch, c.q_heads, m + 1, c.d_k}); break;
    case 1: reshape(o.q, {c.batch, c.heads > 1 ? c.q_heads + 1 : 0, m, c.d_k}); break;
    case 2: reshape(o.q, {c.batch, c.q_heads, m, c.d_k + 1}); break;
    case 3: reshape(o.q, {c.batch, c.q_heads, c.d_k}); break;
    case 4: reshape(o.mask, {c.batch, len}); break;  // the chunk's positions left out
    case 5: o.layer = static_cast<std::int64_t>(c.layers); break;
    case 6: {  // one to three positions past max_len (a long case's max_len is too long to write at once)
      if (s.long_case) return reshape(o.q, {c.batch, c.q_heads, m + 1, c.d_k});
      const std::size_t n = c.capacity - len + 1 + seed % 3;
      beam_block(*s.src, c.batch, c.heads, static_cast<std::int64_t>(len), n, seed, o.k, o.v);
      o.q = beam_queries(*s.src, c.batch, c.q_heads, n);
      o.mask = {};
      break;
    }
    default: reshape(o.v, {c.batch, c.heads, m + 1, c.d_k}); break;
  }
}

/// Reorders as beam search makes them (draw_reorder): every cycle shape, repeats and drops at every
/// batch size. One in eight is the simplest repeat (every choice 0), which every other shrinks towards.
rc::Gen<beam_command> reorder_gen(const gen_state& s) {
  const std::size_t batch = s.config.batch;
  return rc::gen::apply(
      [batch](int simplest, std::uint64_t seed) {
        op o;
        o.kind = op_kind::reorder;
        o.index = draw_reorder(batch, simplest == 0 ? std::vector<std::uint64_t>{} : reorder_choices(batch, seed));
        return command<beam_model>(std::move(o));
      },
      uniform_in(0, 8), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<beam_command> bad_reorder_gen(const gen_state& s) {
  return rc::gen::apply(
      [s](int variant, std::size_t at) {
        const auto b = static_cast<std::int64_t>(s.config.batch);
        op o;
        o.kind = op_kind::reorder;
        o.index.assign(s.config.batch, 0);
        switch (variant) {
          case 0: o.index[at] = b; break;  // one past the last row
          case 1: o.index[at] = -1; break;
          case 2: o.index.push_back(0); break;  // one index too many
          default: o.index.pop_back(); break;   // one too few
        }
        return command<beam_model>(std::move(o));
      },
      uniform_in(0, 4), uniform_in<std::size_t>(0, s.config.batch));
}

rc::Gen<beam_command> decode_gen(const gen_state& s, bool bad) {
  const std::size_t b = s.config.batch, cap = s.config.capacity;
  const auto row =
      rc::gen::construct<mask_row>(uniform_in<int>(0, mask_row::shapes), uniform_in<std::size_t>(0, cap + 1),
                                   uniform_in<std::size_t>(0, cap + 1), uniform_in<std::size_t>(0, cap + 1));
  return rc::gen::apply(
      [s, bad](std::size_t layer, bool masked, std::vector<mask_row> rows, int variant) {
        const cache_config& c = s.config;
        const std::size_t len = s.lengths[layer];
        op o;
        o.kind = op_kind::decode;
        o.layer = static_cast<std::int64_t>(layer);
        o.q = beam_query(*s.src, c.batch, c.q_heads);
        if (masked) o.mask = engine_mask(rows, len);
        if (!bad) return command<beam_model>(std::move(o));
        switch (variant) {
          case 0: reshape(o.q, {c.batch * c.q_heads, c.d_k}); break;                       // rank 2
          case 1: reshape(o.q, {c.batch, c.heads > 1 ? c.q_heads + 1 : 0, c.d_k}); break;  // not a multiple of H
          case 2: reshape(o.q, {c.batch, c.q_heads, c.d_k + 1}); break;                    // wrong width
          case 3: o.mask = engine_mask(rows, len + 1); break;                              // mask longer than the layer
          case 4: reshape(o.mask, {len}); break;                                           // rank 1 mask
          default: o.layer = static_cast<std::int64_t>(c.layers); break;                   // layer out of range
        }
        return command<beam_model>(std::move(o));
      },
      uniform_in<std::size_t>(0, s.config.layers), rc::gen::arbitrary<bool>(),
      rc::gen::container<std::vector<mask_row>>(b, row), uniform_in(0, 6));
}

/// A prefill of m positions onto layer `l` with a mask drawn from `rows` when `masked` (all ones for `all_live`).
op prefill_op(const gen_state& s, std::size_t l, std::size_t m, std::uint64_t seed, const std::vector<mask_row>& rows,
              bool masked, bool all_live) {
  const cache_config& c = s.config;
  const std::size_t len = s.lengths[l];
  op o{.kind = op_kind::prefill, .layer = static_cast<std::int64_t>(l)};
  beam_block(*s.src, c.batch, c.heads, static_cast<std::int64_t>(len), m, seed, o.k, o.v);
  o.q = beam_queries(*s.src, c.batch, c.q_heads, m);
  if (masked) o.mask = engine_mask(rows, len + m);
  if (!masked && all_live) o.mask = {{c.batch, len + m}, std::vector<double>(c.batch * (len + m), 1.0)};
  return o;
}

/// Prefills of 1, 2, max_steps or the room positions on a generated layer (`bad`: refused ones, see beam_mix).
rc::Gen<beam_command> prefill_gen(const gen_state& s, bool bad, bool mask_always) {
  const std::size_t cap = s.config.capacity;
  const auto row =
      rc::gen::construct<mask_row>(uniform_in<int>(0, mask_row::shapes), uniform_in<std::size_t>(0, cap + 1),
                                   uniform_in<std::size_t>(0, cap + 1), uniform_in<std::size_t>(0, cap + 1));
  return rc::gen::mapcat(uniform_in<std::size_t>(0, s.config.layers), [s, bad, mask_always, row](std::size_t l) {
    const std::size_t room = s.config.capacity - s.lengths[l];
    std::vector<std::size_t> sizes{1, 2, s.max_steps};
    if (!s.long_case) sizes.push_back(room);  // a long case writes a few positions per op
    std::erase_if(sizes, [room](std::size_t n) { return n > room || n == 0; });
    if (sizes.empty()) sizes.push_back(0);
    return rc::gen::apply(
        [s, l, bad, mask_always](std::size_t m, bool masked, std::vector<mask_row> rows, int variant,
                                 std::uint64_t seed) {
          op o = prefill_op(s, l, m, seed, rows, masked, mask_always);
          if (bad) refuse_prefill(s, o, variant, seed);
          return command<beam_model>(std::move(o));
        },
        rc::gen::elementOf(sizes), rc::gen::arbitrary<bool>(),
        rc::gen::container<std::vector<mask_row>>(s.config.batch, row), uniform_in(0, 8),
        rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
  });
}

/// One op drawn by weight from the property's mix. For beam, `append` is an update at the
/// layer's length of up to max_steps (never past max_len), `fill` ends exactly at max_len,
/// `overfill` goes past it, `empty` writes 0 steps, `bad_shape` covers shapes, layers and starts.
rc::Gen<beam_command> op_gen(beam_mix mix, const gen_state& s, bool can_decode, capability_set caps) {
  if (s.long_case) {
    // A big cache (config_gen) starts in its last layer, which begins past 2^24 elements, and writes
    // a few positions per op: a fill of its max_len would write 2^24 / L elements at once.
    mix.fill = mix.overfill = 0;
    if (std::all_of(s.lengths.begin(), s.lengths.end(), [](std::size_t n) { return n == 0; }))
      return rc::gen::apply(
          [s](std::size_t n, std::uint64_t seed) {
            return command<beam_model>(update_op(s, static_cast<std::int64_t>(s.config.layers - 1), 0, n, seed));
          },
          uniform_in<std::size_t>(1, 5), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
  }
  std::vector<std::pair<int, rc::Gen<beam_command>>> choices;
  auto add = [&](int weight, rc::Gen<beam_command> g) {
    if (weight > 0) choices.emplace_back(weight, std::move(g));
  };
  const std::size_t most = s.max_steps;
  add(mix.append, on_layer(s, at_length(s, [most](std::size_t room) {
                             return uniform_in<std::size_t>(1, std::max<std::size_t>(1, std::min(most, room)) + 1);
                           })));
  add(mix.fill, on_layer(s, at_length(s, [](std::size_t room) { return rc::gen::just(room); })));
  add(mix.overfill, on_layer(s, at_length(s, [](std::size_t room) {
                               return rc::gen::map(uniform_in<std::size_t>(1, 4),
                                                   [room](std::size_t extra) { return room + extra; });
                             })));
  add(mix.empty, on_layer(s, at_length(s, [](std::size_t) { return rc::gen::just<std::size_t>(0); })));
  add(mix.rollback, rollback_gen(s));
  add(mix.bad_shape, bad_update_gen(s));
  add(mix.reorder, reorder_gen(s));
  add(mix.bad_reorder, bad_reorder_gen(s));
  if (can_decode) {
    add(mix.decode, decode_gen(s, false));
    add(mix.bad_decode, decode_gen(s, true));
  }
  if (caps.has(capability::prefill)) {
    add(mix.prefill, prefill_gen(s, false, mix.mask_prefills));
    add(mix.bad_prefill, prefill_gen(s, true, false));
  }
  if (choices.empty()) add(1, on_layer(s, at_length(s, [](std::size_t) { return rc::gen::just<std::size_t>(0); })));
  return weighted(std::move(choices));
}

/// L, B, H, Hq = G H, T, D. H = Hq, H = 1 (multi-query) and grouped heads all occur, and now and
/// then a production head dim or group (shapes.h); picking by index lets a failing case shrink
/// towards the smallest shape. B reaches 8, so that reorders show every cycle shape at every batch
/// size, and B x H stays within max_count^2 to keep the cost. A long case's cache is big: more than
/// 2^24 elements, its last layer alone beginning past 2^24 in (L, B, H, T, D) order, with a
/// production head dim; B <= 2 and H <= 4 keep its decodes to a few dozen attention problems.
config_gens config_gen(bool long_traces, bool deep) {
  static const std::vector<std::size_t> quick_dims = {1, 2, 3, 4, 8, 16}, deep_dims = {1, 2, 3, 4, 5, 8, 16, 32, 64};
  static const std::vector<std::size_t> groups = {1, 2, 4}, small_heads = {1, 2, 4};
  const std::size_t max_cap = deep ? 64 : (long_traces ? 24 : 10),
                    max_count = deep ? 4 : 3;  // of layers, rows and kv heads
  auto make = [](std::size_t layers, std::size_t batch, std::size_t kv_heads, std::size_t group, std::size_t cap,
                 std::size_t d) {
    cache_config c{cache_kind::beam, cap, d, d};
    c.layers = layers, c.batch = batch, c.heads = kv_heads, c.q_heads = kv_heads * group;
    return c;
  };
  auto count = uniform_in<std::size_t>(1, max_count + 1);
  auto group = production_or(groups, production_groups);
  auto big = rc::gen::apply(
      [make](std::size_t layers, std::size_t batch, std::size_t kv_heads, std::size_t g, std::size_t d) {
        const std::size_t t = big_beam_elements / ((layers - 1) * batch * kv_heads * d) + 1;
        return make(layers, batch, kv_heads, g, t, d);
      },
      uniform_in<std::size_t>(4, 9), uniform_in<std::size_t>(1, 3), rc::gen::elementOf(small_heads), group,
      rc::gen::elementOf(std::vector<std::size_t>(std::begin(production_dims), std::end(production_dims))));
  // A production case's heads are wide and grouped: B and H at most 2 keep its decodes to a few dozen
  // problems (the ordinary cases vary the batch).
  static const std::vector<std::size_t> batches = {1, 2, 3, 4, 5, 6, 7, 8}, kv_heads = {1, 2, 3, 4}, few = {1, 2};
  auto ordinary = rc::gen::apply(
      [make, max_count](std::size_t layers, std::size_t batch, std::size_t heads, std::size_t g, std::size_t cap,
                        std::size_t d) {
        return make(layers, batch, std::min(heads, std::max<std::size_t>(1, max_count * max_count / batch)), g, cap, d);
      },
      count, production_or(batches, few), production_or(std::span(kv_heads).first(max_count), few), group,
      uniform_in<std::size_t>(1, max_cap + 1), head_dim_gen(deep ? deep_dims : quick_dims));
  return {ordinary, big};
}

}  // namespace

case_generator beam_cases(beam_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    return run_commands<beam_model>(
        p, impl, o, config_gen(p.long_traces, o.deep),
        [](const cache_config& c, const numeric_profile& prof) { return beam_model(c, prof); },
        [mix](const beam_model& m, const gen_context& ctx) {
          gen_state s{ctx.src, m.config(), {}, ctx.long_case ? 4 : ctx.max_steps, ctx.long_case};
          for (std::size_t l = 0; l < m.config().layers; ++l) s.lengths.push_back(m.length(l));
          return op_gen(mix, s, ctx.can_decode, ctx.caps);
        });
  };
}

}  // namespace kvconform::kinds
