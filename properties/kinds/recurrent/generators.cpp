// RapidCheck stateful generation for the recurrent kind: draft rounds, prefixes resumed, checkpoints evicted.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "oracle/models/recurrent_model.h"
#include "properties/generate/commands.h"
#include "properties/kinds/recurrent/parts.h"

namespace kvconform::kinds {

op recurrent_append(const cache_config& c, std::int64_t seq, std::vector<std::int64_t> tokens, std::uint64_t seed,
                    int regime) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit;
  const std::size_t n = tokens.size(), ch = 2 * c.d_k + c.d_v;
  std::vector<double> x(n * ch), g(n), beta;
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t j = 0; j < ch; ++j) {
      double& e = x[t * ch + j];
      e = normal(rng);
      if (regime == 3 && j >= 2 * c.d_k) e += 100;                                    // offset values
      if (regime == 3 && j >= c.d_k && j < 2 * c.d_k) e = (t % 2 ? -1 : 1) + e / 64;  // alternating keys
    }
    switch (regime) {
      case 1: g[t] = rng() % 2 ? 0.0 : -1e-6 * unit(rng); break;  // decays within 1e-6 of 1, half exactly 1
      case 2: g[t] = rng() % 8 ? -1 - 40 * unit(rng) : -700 - 100 * unit(rng); break;  // strong, to exp's underflow
      default: g[t] = -unit(rng); break;
    }
    if (c.delta) beta.push_back(rng() % 4 ? unit(rng) : 1.0);
  }
  op o;
  o.kind = op_kind::append, o.seq = seq, o.tokens = std::move(tokens);
  o.x = n == 1 && rng() % 2 ? tensor::vector(std::move(x)) : tensor::matrix(n, ch, std::move(x));
  o.g = tensor::vector(std::move(g)), o.beta = tensor::vector(std::move(beta));
  for (auto [t, d] : {std::pair{&o.k, c.d_k}, {&o.v, c.d_v}}) {  // the attention layers' rows
    t->shape = {c.layers, n, d};
    t->data.resize(c.layers * n * d);
    for (double& e : t->data) e = normal(rng);
  }
  return o;
}

namespace {
using rcommand = command_ptr<recurrent_model>;
using choices = std::vector<std::pair<int, rc::Gen<rcommand>>>;
using maybe_ops = std::optional<std::vector<op>>;

void add(choices& c, int weight, rc::Gen<rcommand> g) {
  if (weight > 0) c.emplace_back(weight, std::move(g));
}

/// Tokens from a vocabulary of four, so that chains repeat across sequences.
std::vector<std::int64_t> tokens_of(std::uint64_t seed, std::size_t n) {
  std::vector<std::int64_t> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((seed >> (2 * (i % 32))) & 3);
  return t;
}

/// The live sequence `pick` names when its command runs (the newest for 0), if any.
std::optional<std::int64_t> resolve(const recurrent_model& m, std::size_t pick) {
  const auto live = m.live();
  if (live.empty()) return std::nullopt;
  return live[live.size() - 1 - pick % live.size()];
}

struct draw {
  std::size_t pick, a, b;
  std::uint64_t seed;
};
rc::Gen<draw> draws() {
  return rc::gen::apply(
      [](std::size_t p, std::size_t a, std::size_t b, std::uint64_t s) {
        return draw{p, a, b, s};
      },
      rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, 4)), uniform_in<std::size_t>(0, 64),
      uniform_in<std::size_t>(0, 64), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

/// A command made when it runs from the model and what it drew.
rc::Gen<rcommand> deferred(const char* label, int regime,
                           std::function<maybe_ops(const recurrent_model&, const draw&, int)> make) {
  return rc::gen::map(draws(), [label, regime, make](const draw& d) {
    return deferred_ops<recurrent_model>(label, [=](const recurrent_model& m) { return make(m, d, regime); });
  });
}

op seq_op(op_kind k, std::int64_t h) {
  op o;
  o.kind = k, o.seq = h;
  return o;
}

/// A malformed op of flavour `v`: x one channel too wide, one decay too many, a growing decay, a write strength
/// outside [0, 1] (or one the decay form has no use for), a token too few, a rollback past the last append, an
/// append to or a fork of a handle no sequence has (a refused fork still uses up its handle), the rows of one
/// attention layer too many.
op bad_op(const recurrent_model& m, std::int64_t h, const draw& d, int regime) {
  const cache_config& c = m.config();
  op o = recurrent_append(c, h, tokens_of(d.seed, 1 + d.a % 2), d.seed, regime);
  const std::size_t n = o.tokens.size(), ch = 2 * c.d_k + c.d_v;
  switch (d.b % 9) {
    case 0: o.x = tensor::matrix(n, ch + 1, std::vector<double>(n * (ch + 1), 0.5)); break;
    case 1: o.g.data.push_back(0), o.g.shape[0] += 1; break;
    case 2: o.g.data[0] = 0.5; break;
    case 3: o.beta = tensor::vector(std::vector<double>(n, c.delta ? 1.5 : 0.5)); break;
    case 4: o.tokens.pop_back(); break;
    case 5:
      return [&] {
        op r = seq_op(op_kind::rollback, h);
        r.count = static_cast<std::int64_t>(m.droppable(h) + 1);
        return r;
      }();
    case 6: o.seq = static_cast<std::int64_t>(m.handles()); break;
    case 7: o.k.shape[0] += 1, o.k.data.resize(o.k.data.size() + n * c.d_k, 0.5); break;
    default: o = seq_op(op_kind::fork, static_cast<std::int64_t>(m.handles())); break;  // a fork of no sequence
  }
  return o;
}

/// A prompt of a block or more computed and released, then created again (its checkpoint resumed) and continued.
maybe_ops round_trip(const recurrent_model& m, const draw& d, int regime) {
  const std::size_t B = m.config().block_size, n = B * (1 + d.a % 2) + d.b % B;
  const auto h = static_cast<std::int64_t>(m.handles());
  const std::vector<std::int64_t> t = tokens_of(d.seed, n);
  std::vector<op> ops{op{.kind = op_kind::create}, recurrent_append(m.config(), h, t, d.seed, regime),
                      seq_op(op_kind::release, h), op{.kind = op_kind::create, .tokens = t}};
  // The hit is the whole blocks of t (of all but its last token under hit_limit=all_but_last): the rest follows.
  const auto hit = static_cast<std::ptrdiff_t>((d.pick % 2 ? n : n - 1) / B * B);
  ops.push_back(recurrent_append(m.config(), h + 1, {t.begin() + hit, t.end()}, d.seed + 1, regime));
  return ops;
}

/// A held chain (a checkpoint's or an attention block's, which may have lost its checkpoint) or a live sequence's
/// tokens, half the time cut short and half the time with a few tokens more (an exact chain is where hit limits
/// differ); then the rest computed.
maybe_ops reuse(const recurrent_model& m, const draw& d, int regime) {
  std::vector<std::vector<std::int64_t>> from = m.chains(true);
  for (std::int64_t h : m.live()) from.push_back(m.tokens(h));
  if (from.empty()) return std::nullopt;  // shrinking removed what made them
  const auto& src = from[d.pick % from.size()];
  // At most four blocks and a part of one: a prompt recomputes what it does not hit, and reusing reused prompts whole
  // would grow them to thousands of steps with nothing more to show.
  const std::size_t B = m.config().block_size, cut = d.a % 2 ? d.a / 2 % (src.size() + 1) : 0,
                    keep = std::min(src.size() - cut, 4 * B + (src.size() - cut) % B);
  std::vector<std::int64_t> t(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(keep));
  for (std::int64_t x : tokens_of(d.seed, d.b % 2 ? d.b / 2 % (B + 1) : 0)) t.push_back(x);
  const auto hit = static_cast<std::ptrdiff_t>(m.hit_of(t));
  std::vector<op> ops{op{.kind = op_kind::create, .tokens = t}};
  if (static_cast<std::size_t>(hit) < t.size())
    ops.push_back(recurrent_append(m.config(), static_cast<std::int64_t>(m.handles()), {t.begin() + hit, t.end()},
                                   d.seed, regime));
  return ops;
}

/// With attention layers: a held prompt of two blocks or more resumed, then evictions until its first block's
/// checkpoint is gone while that block's rows stay (a hit touches the blocks it reads, not the shorter checkpoints),
/// then the first block's prompt and a token more created again: a hit the blocks alone would have made longer.
maybe_ops short_of_state(const recurrent_model& m, const draw& d, int) {
  const std::size_t B = m.config().block_size;
  std::vector<std::vector<std::int64_t>> whole;
  for (const auto& chain : m.chains())
    if (chain.size() >= 2 * B && m.hit_of(chain) >= 2 * B) whole.push_back(chain);
  if (m.config().layers == 0 || whole.empty()) return std::nullopt;
  const auto& chain = whole[d.pick % whole.size()];
  std::vector<op> ops{op{.kind = op_kind::create, .tokens = chain}};
  recurrent_model after = m;
  after.apply(ops[0]);
  const std::vector<std::int64_t> first(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(B));
  std::int64_t evicted = 0;
  for (; after.holds_checkpoint(first); ++evicted) after.apply(op{.kind = op_kind::evict, .count = 1});
  if (!after.holds_block(first)) return std::nullopt;  // its block went first
  ops.push_back(op{.kind = op_kind::evict, .count = evicted});
  ops.push_back(op{.kind = op_kind::create, .tokens = first});
  ops.back().tokens.push_back(static_cast<std::int64_t>(d.seed % 4));
  return ops;
}

/// The next step and k drafts; the rejected ones rolled back (none rejected: nothing to roll back).
maybe_ops draft_round(const recurrent_model& m, std::int64_t h, const draw& d, int regime) {
  const std::size_t k = d.a % 4, rejected = d.b % (k + 1);
  std::vector<op> ops{recurrent_append(m.config(), h, tokens_of(d.seed, 1 + k), d.seed, regime)};
  if (rejected > 0) {
    op r = seq_op(op_kind::rollback, h);
    r.count = static_cast<std::int64_t>(rejected);
    ops.push_back(r);
  }
  return ops;
}

/// An op on the live sequence the draw picks when it runs.
using on_sequence = std::function<maybe_ops(const recurrent_model&, std::int64_t, const draw&, int)>;
rc::Gen<rcommand> on_live(const char* label, int regime, on_sequence make) {
  return deferred(label, regime, [make](const recurrent_model& m, const draw& d, int regime) -> maybe_ops {
    const auto h = resolve(m, d.pick);
    if (!h) return std::nullopt;
    return make(m, *h, d, regime);
  });
}

/// A long case (shapes.h): a sequence, then one bulk append of long_rows_gen steps, chunked over many blocks; kept
/// for good by the next append or its release, it publishes hundreds of checkpoints into a pool of a few.
std::optional<rc::Gen<rcommand>> long_start(const recurrent_model& m, const gen_context& ctx, int regime) {
  if (!ctx.long_case) return std::nullopt;
  if (m.live().empty()) return rc::gen::just(kvconform::command<recurrent_model>(op{.kind = op_kind::create}));
  if (m.length(m.live().front()) > 0) return std::nullopt;
  return rc::gen::apply(
      [c = m.config(), h = m.live().front(), regime](std::size_t n, std::uint64_t seed) {
        return kvconform::command<recurrent_model>(recurrent_append(c, h, tokens_of(seed, n), seed, regime));
      },
      long_rows_gen(), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<rcommand> op_gen(const recurrent_mix& mix, const recurrent_model& m, const gen_context& ctx) {
  const int regime = ctx.src ? static_cast<int>(ctx.src->kind()) % 4 : 0;
  if (auto start = long_start(m, ctx, regime)) return *start;
  choices c;
  add(c, mix.create, rc::gen::just(kvconform::command<recurrent_model>(op{.kind = op_kind::create})));
  add(c, mix.evict, rc::gen::map(uniform_in<std::int64_t>(0, 3), [](std::int64_t n) {
        return kvconform::command<recurrent_model>(op{.kind = op_kind::evict, .count = n});
      }));
  add(c, mix.round_trip, deferred("round trip", regime, round_trip));
  if (m.live().empty() && m.chains(true).empty()) return weighted(std::move(c));
  add(c, mix.reuse, deferred("reuse", regime, reuse));
  add(c, mix.short_of_state, deferred("short of the state", regime, short_of_state));
  if (m.live().empty()) return weighted(std::move(c));
  const std::size_t most = mix.long_appends ? 4 * m.config().block_size : 3;
  add(c, mix.append, on_live("append", regime, [most](const recurrent_model& m, std::int64_t h, const draw& d, int r) {
        return maybe_ops{{recurrent_append(m.config(), h, tokens_of(d.seed, 1 + d.a % most), d.seed, r)}};
      }));
  add(c, mix.cross, on_live("cross", regime, [](const recurrent_model& m, std::int64_t h, const draw& d, int r) {
        const std::size_t B = m.config().block_size, n = B - m.length(h) % B + d.a % (B + 1);
        return maybe_ops{{recurrent_append(m.config(), h, tokens_of(d.seed, n), d.seed, r)}};
      }));
  add(c, mix.speculate, on_live("draft round", regime, draft_round));
  add(c, mix.rollback, on_live("rollback", regime, [](const recurrent_model& m, std::int64_t h, const draw& d, int) {
        op r = seq_op(op_kind::rollback, h);
        r.count = static_cast<std::int64_t>(d.a % (m.droppable(h) + 1));
        return maybe_ops{{r}};
      }));
  for (const auto& [weight, kind] : {std::pair{mix.fork, op_kind::fork}, {mix.release, op_kind::release}})
    add(c, weight,
        on_live(kind == op_kind::fork ? "fork" : "release", regime,
                [k = kind](const recurrent_model&, std::int64_t h, const draw&, int) {
                  return maybe_ops{{seq_op(k, h)}};
                }));
  add(c, mix.bad, on_live("malformed", regime, [](const recurrent_model& m, std::int64_t h, const draw& d, int r) {
        return maybe_ops{{bad_op(m, h, d, r)}};
      }));
  return weighted(std::move(c));
}

/// A state's width: small ones, and in a production case the head dims of recurrent layers (Mamba-2's 64, Gated
/// DeltaNet's 128, and 32); a state is d_k x d_v, so the 256 of attention heads would cost 4 times 128's for nothing
/// new.
rc::Gen<std::size_t> state_width_gen(bool deep) {
  static const std::vector<std::size_t> quick = {1, 2, 3, 4, 8, 16}, deep_dims = {1, 2, 3, 4, 5, 8, 16, 64},
                                        production = {32, 64, 128};
  return production_or(deep ? deep_dims : quick, production);
}

/// Small states, blocks and stores, so that chains repeat and checkpoints are evicted within a short trace; the delta
/// rule and the decay form alike; no attention layer, one or two (at least one with `attention`: the pool is then
/// shared by checkpoints and blocks, so its capacity is drawn larger). A long case: blocks of 16 to 64 steps and a pool
/// of 17 to 32 entries (more than 256 rows: the "long cache" event), for one sequence of long_rows_min to
/// long_rows_max steps (long_start): every observation shows every entry, named by chains of up to thousands of
/// tokens, so a pool of one per block would cost the square of the length.
config_gens config_gen(bool long_traces, bool deep, bool attention) {
  const std::size_t max_slots = (deep ? 16 : (long_traces ? 6 : 4)) * (attention ? 2 : 1), max_block = deep ? 8 : 4;
  auto make = [](std::size_t slots, std::size_t block, std::size_t dk, std::size_t dv, std::size_t w, bool delta,
                 std::size_t layers) {
    cache_config c{cache_kind::recurrent, slots, dk, dv};
    c.block_size = block, c.conv_width = w, c.delta = delta, c.layers = layers;
    return c;
  };
  const auto layers = attention ? uniform_in<std::size_t>(1, 3)
                                : rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, 3));
  return {rc::gen::apply(make, uniform_in<std::size_t>(1, max_slots + 1), uniform_in<std::size_t>(1, max_block + 1),
                         state_width_gen(deep), state_width_gen(deep), uniform_in<std::size_t>(1, 5),
                         rc::gen::arbitrary<bool>(), layers),
          rc::gen::apply(make, uniform_in<std::size_t>(17, 33), uniform_in<std::size_t>(16, 65), long_width_gen(),
                         long_width_gen(), uniform_in<std::size_t>(1, 5), rc::gen::arbitrary<bool>(), layers)};
}
}  // namespace

case_generator recurrent_cases(recurrent_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    return run_commands<recurrent_model>(
        p, impl, o, config_gen(p.long_traces, o.deep, mix.attention),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return recurrent_model(c, prof, pol, false);  // the executor's model judges the numbers
        },
        [mix](const recurrent_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); },
        p.long_traces ? 3 : 1.5);
  };
}

}  // namespace kvconform::kinds
