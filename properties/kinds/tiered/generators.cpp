// RapidCheck stateful generation for the tiered kind: prompts computed, stored, evicted and loaded back.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "oracle/models/tiered_model.h"
#include "properties/generate/commands.h"
#include "properties/generate/pool_speculation.h"
#include "properties/kinds/prefix/prefix_generation.h"
#include "properties/kinds/tiered/parts.h"

namespace kvconform::kinds {

namespace {
using namespace prefix_generation;
using tiered_command = pool_command<tiered_model>;
using choices = pool_choices<tiered_model>;
using made_op = std::optional<op>;

/// The `from_newest`-th newest live sequence (wrapping), or nullopt.
std::optional<std::int64_t> newest(const tiered_model& m, std::size_t from_newest) {
  const auto live = m.live();
  if (live.empty()) return std::nullopt;
  return live[live.size() - 1 - from_newest % live.size()];
}

tiered_command deferred(const char* label, std::function<made_op(const tiered_model&)> f) {
  return std::make_shared<const deferred_command<tiered_model>>(label, std::move(f));
}

/// A create whose prompt is the `which`-th newest token sequence held or put so far: whole, or cut to whole tier
/// blocks, with `extra` tokens after it (a miss, a hit, a hit that stops inside a tier block).
tiered_command prompt_create(std::size_t which, bool whole_blocks, std::vector<std::int64_t> extra) {
  return deferred("create", [=](const tiered_model& m) -> made_op {
    op o;
    o.kind = op_kind::create;
    const auto& history = m.history();
    if (!history.empty()) {
      const auto& from = history[history.size() - 1 - which % history.size()].tokens;
      const std::size_t keep = whole_blocks ? from.size() / m.tier_rows() * m.tier_rows() : from.size();
      o.tokens.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(keep));
    }
    o.tokens.insert(o.tokens.end(), extra.begin(), extra.end());
    return o;
  });
}

/// An append of the next `n` tokens of a sequence's prompt (fewer where the prompt or the pool ends): the rows a
/// miss computes, which the tiers can then store.
tiered_command prompt_append(std::size_t from_newest, std::size_t n, std::shared_ptr<const row_source> src) {
  return deferred("append of the prompt", [=](const tiered_model& m) -> made_op {
    const auto h = newest(m, from_newest);
    if (!h || m.loading(*h)) return std::nullopt;
    const auto &prompt = m.prompt(*h), &held = m.tokens(*h);
    if (held.size() >= prompt.size() || !std::equal(held.begin(), held.end(), prompt.begin())) return std::nullopt;
    const std::size_t take = std::min({n, prompt.size() - held.size(), m.room(*h)});
    if (take == 0) return std::nullopt;
    const std::vector<std::int64_t> next(prompt.begin() + static_cast<std::ptrdiff_t>(held.size()),
                                         prompt.begin() + static_cast<std::ptrdiff_t>(held.size() + take));
    return token_append(*src, *h, held, next, 0);
  });
}

/// A store of a sequence's last written tier block (`which` 0), an earlier one (1) or the one still being written
/// (2: refused `pending`), to host or, when `disk`, from host to disk.
tiered_command store_command(std::size_t from_newest, int which, bool disk) {
  return deferred("store", [=](const tiered_model& m) -> made_op {
    const auto h = newest(m, from_newest);
    if (!h) return std::nullopt;
    const std::size_t written = m.size(*h) / m.tier_rows();
    if (written == 0 && which != 2) return std::nullopt;
    op o;
    o.kind = op_kind::store, o.seq = *h, o.tier = disk && m.config().disk_blocks > 0 ? 2 : 1;
    o.block = static_cast<std::int64_t>(which == 0 ? written - 1 : which == 1 ? from_newest % written : written);
    return o;
  });
}

tiered_command load_command(std::size_t from_newest, bool disk) {
  return deferred("load", [=](const tiered_model& m) -> made_op {
    const auto h = newest(m, from_newest);
    if (!h) return std::nullopt;
    op o;
    o.kind = op_kind::load, o.seq = *h, o.tier = disk && m.config().disk_blocks > 0 ? 2 : 1;
    return o;
  });
}

/// A complete (or fail) of the `from_newest`-th newest pending transfer; `stale`: of a number that is not pending.
tiered_command end_command(std::size_t from_newest, bool fail, bool stale) {
  return deferred(fail ? "fail" : "complete", [=](const tiered_model& m) -> made_op {
    std::vector<std::int64_t> ids;
    for (const auto& entry : m.pending()) ids.push_back(entry.first);
    op o;
    o.kind = fail ? op_kind::fail : op_kind::complete;
    if (stale) {
      o.transfer = m.transfers() - static_cast<std::int64_t>(from_newest % 3);  // finished, refused or never begun
      if (std::find(ids.begin(), ids.end(), o.transfer) != ids.end()) o.transfer = m.transfers();
      return o;
    }
    if (ids.empty()) return std::nullopt;
    o.transfer = ids[ids.size() - 1 - from_newest % ids.size()];
    return o;
  });
}

tiered_command evict_command(std::int64_t tier, std::int64_t count) {
  return deferred("evict", [=](const tiered_model& m) -> made_op {
    op o;
    o.kind = op_kind::evict, o.count = count;
    o.tier = tier == 2 && m.config().disk_blocks == 0 ? 1 : tier;
    return o;
  });
}

/// A put of the `which`-th newest token sequence held so far, cut to whole tier blocks (or `fresh` tokens when it
/// has none), with the rows an append of those tokens would have.
tiered_command put_command(std::size_t which, bool disk, std::vector<std::int64_t> fresh,
                           std::shared_ptr<const row_source> src) {
  return deferred("put", [=](const tiered_model& m) -> made_op {
    std::vector<std::int64_t> tokens;
    const auto& history = m.history();
    if (!history.empty()) tokens = history[history.size() - 1 - which % history.size()].tokens;
    tokens.resize(tokens.size() / m.tier_rows() * m.tier_rows());
    if (tokens.empty()) tokens = fresh, tokens.resize(m.tier_rows(), 1);
    op o = token_append(*src, 0, {}, tokens, 0);
    o.kind = op_kind::put, o.seq = 0, o.tier = disk && m.config().disk_blocks > 0 ? 2 : 1;
    return o;
  });
}

/// The ops of a group, each applied to a copy of the model as it is made, so that the next one names what the
/// last made (its handle, its transfer's number, the rows its create found).
struct group_builder {
  tiered_model m;
  std::shared_ptr<const row_source> src;
  std::vector<op> ops;
  void run(op o) {
    if (o.kind != op_kind::decode) m.apply(o);  // a decode changes nothing, and its problem costs as much as a case
    ops.push_back(std::move(o));
  }
  std::int64_t create(const std::vector<std::int64_t>& tokens) {
    run(op{.kind = op_kind::create, .tokens = tokens});
    return m.handles() - 1;
  }
  /// h's prompt up to `upto` tokens (what fits), computed as a miss would.
  void compute(std::int64_t h, std::size_t upto = SIZE_MAX) {
    if (!m.is_live(h) || m.loading(h)) return;
    const auto &prompt = m.prompt(h), &held = m.tokens(h);
    const std::size_t end = std::min(upto, prompt.size());
    const std::size_t take = std::min(end - std::min(end, held.size()), m.room(h));
    if (take == 0 || !std::equal(held.begin(), held.end(), prompt.begin())) return;
    run(token_append(*src, h, held,
                     {prompt.begin() + static_cast<std::ptrdiff_t>(held.size()),
                      prompt.begin() + static_cast<std::ptrdiff_t>(held.size() + take)},
                     0));
  }
  std::int64_t begin(op o) {
    const std::int64_t n = m.transfers();
    run(std::move(o));
    return n;
  }
  void end(std::int64_t n, bool fail = false) {
    run(op{.kind = fail ? op_kind::fail : op_kind::complete, .transfer = n});
  }
  void put(int tier, const std::vector<std::int64_t>& tokens) {
    op o = token_append(*src, 0, {}, tokens, 0);
    o.kind = op_kind::put, o.seq = 0, o.tier = tier;
    run(std::move(o));
  }
};

/// A prompt of `blocks` whole tier blocks (and `extra` tokens more): the newest held or put before when `reuse`,
/// else fresh tokens.
std::vector<std::int64_t> group_prompt(const tiered_model& m, bool reuse, std::uint64_t bits, std::size_t blocks,
                                       std::size_t extra) {
  std::vector<std::int64_t> t;
  if (reuse && !m.history().empty()) t = m.history().back().tokens;
  t.resize(std::max(t.size() / m.tier_rows(), blocks) * m.tier_rows(), 0);
  const auto fresh = tokens_of(bits, t.size() + extra);
  for (std::size_t i = reuse ? t.size() : 0; i < fresh.size(); ++i)
    i < t.size() ? void(t[i] = fresh[i]) : t.push_back(fresh[i]);
  return t;
}

/// What happens around a round trip's pending transfers: a tail drawn once, read by each phase.
struct round_trip_plan {
  bool via_store = false;    ///< the prompt computed and stored, else put by a producer outside
  bool disk = false;         ///< through the disk tier (then host to device)
  bool reuse = false;        ///< the newest prompt held or put, else fresh tokens
  bool evict_all = true;     ///< the device lets go of all it cached (else of its last block only)
  bool device_part = false;  ///< a put prompt's first device block computed before the load: it straddles
  std::size_t blocks = 1;    ///< tier blocks of the prompt
  int store_tail = 0;        ///< 1 a store of the block still being written first, 2 an eviction in the tier
                             ///< while the store is pending, 3 the store fails, 4 completions newest first
  int load_tail = 0;         ///< 1 the load fails, 2 an eviction in its tier, 3 a put that needs the whole
                             ///< tier, 4 an op on the loading sequence
};

/// The store half of a round trip: the prompt computed on `h` and stored to host (and disk), then let go of by the
/// device; false when it ended the round trip (a failed store, nothing written).
bool store_phase(group_builder& g, const round_trip_plan& plan, std::int64_t h, std::size_t whole, int tier) {
  const std::size_t F = g.m.tier_rows();
  if (plan.store_tail == 1 && g.m.is_live(h) && g.m.size(h) + 1 < whole) {  // the last row still to come
    g.compute(h, whole - 1);
    g.run(op{.kind = op_kind::store, .seq = h, .tier = 1, .block = static_cast<std::int64_t>(whole / F - 1)});
  }
  g.compute(h);
  const std::size_t written = g.m.is_live(h) ? g.m.size(h) / F : 0;
  if (written == 0) return false;
  std::vector<std::int64_t> stores;
  for (std::size_t b = written > 1 && plan.store_tail == 4 ? written - 2 : written - 1; b < written; ++b)
    stores.push_back(g.begin(op{.kind = op_kind::store, .seq = h, .tier = 1, .block = static_cast<std::int64_t>(b)}));
  if (plan.store_tail == 2) g.run(op{.kind = op_kind::evict, .count = 1, .tier = 1});
  if (plan.store_tail == 3) return g.end(stores.back(), true), false;
  // Tails 2 and 4 end the host stores after the release: the sources outlive their sequence's hold.
  const bool after = tier == 1 && (plan.store_tail == 2 || plan.store_tail == 4);
  if (!after)
    for (std::int64_t n : stores) g.end(n);
  if (tier == 2)  // on to disk while the sequence names the chain; then off host, so that the load comes from disk
    g.end(g.begin(op{.kind = op_kind::store, .seq = h, .tier = 2, .block = static_cast<std::int64_t>(written - 1)}));
  g.run(op{.kind = op_kind::release, .seq = h});
  if (const auto n = g.m.host_evictable(); tier == 2 && n > 0)
    g.run(op{.kind = op_kind::evict, .count = static_cast<std::int64_t>(n), .tier = 1});
  if (const std::size_t n = g.m.evictable_blocks(); n > 0)
    g.run(op{.kind = op_kind::evict, .count = static_cast<std::int64_t>(plan.evict_all ? n : 1), .tier = 0});
  if (after) {
    for (auto n = stores.rbegin(); n != stores.rend(); ++n) g.end(*n);  // newest first: refused under fifo
    if (stores.size() > 1) g.end(stores.back());
  }
  return true;
}

/// A round trip through a tier, as one command: a prompt computed and stored, or put by a producer outside; then,
/// after the device lets go of it, created again, loaded back and decoded. Every choice of the plan shrinks towards
/// the shortest trip (a put, no tail), so that a failure shows in the fewest ops.
tiered_command round_trip(round_trip_plan plan, std::uint64_t bits, std::shared_ptr<const row_source> src) {
  return deferred_ops<tiered_model>("round trip", [=](const tiered_model& state) -> std::optional<std::vector<op>> {
    group_builder g{state, src, {}};
    const auto& c = state.config();
    const int tier = plan.disk && c.disk_blocks > 0 ? 2 : 1;
    const std::size_t F = state.tier_rows();
    const std::size_t blocks = plan.store_tail == 4 ? 2 : plan.blocks;  // two stores pending at once
    const auto prompt = group_prompt(state, plan.reuse, bits, blocks, bits % 3 == 0 ? 1 : 0);
    const std::size_t whole = prompt.size() / F * F;
    if (plan.via_store && !store_phase(g, plan, g.create(prompt), whole, tier)) return g.ops;
    if (!plan.via_store) g.put(tier, {prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(whole)});
    const std::int64_t b = g.create(prompt);
    if (plan.device_part && !plan.via_store) g.compute(b, c.block_size);  // the load starts inside a tier block
    const std::int64_t n = g.begin(op{.kind = op_kind::load, .seq = b, .tier = tier});
    switch (plan.load_tail) {
      case 1: return g.end(n, true), g.ops;
      case 2: g.run(op{.kind = op_kind::evict, .count = 1, .tier = tier}); break;
      case 3: g.put(tier, tokens_of(~bits, F * (tier == 1 ? c.host_blocks : c.disk_blocks))); break;
      case 4: g.run(op{.kind = op_kind::decode, .q = tensor::vector(src->query()), .seq = b}); break;
      default: break;
    }
    g.end(n);
    if (tier == 2) g.end(g.begin(op{.kind = op_kind::load, .seq = b, .tier = 1}));
    if (g.m.is_live(b) && g.m.size(b) > 0)
      g.run(op{.kind = op_kind::decode, .q = tensor::vector(src->query()), .seq = b});
    return g.ops;
  });
}

/// true with weight `yes` against `no`, shrinking towards false.
rc::Gen<bool> either(int no, int yes) {
  return rc::gen::map(uniform_in(0, std::max(no + yes, 1)), [no](int r) { return r >= no; });
}
/// The tails `mask` allows, equally likely.
rc::Gen<int> tails(unsigned mask) {
  std::vector<int> allowed;
  for (int t = 0; t < 5; ++t)
    if (mask & (1u << t)) allowed.push_back(t);
  return rc::gen::elementOf(allowed.empty() ? std::vector<int>{0} : allowed);
}

void add_tier_ops(choices& c, const tiered_mix& mix, const tiered_model& m, const gen_context& ctx) {
  const std::size_t live = m.live().size();
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live + 3));
  const auto bits = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  const auto disk = rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
  const auto src = ctx.src;
  const std::size_t tier_rows = m.tier_rows();
  add(c, live == 0 ? 0 : mix.prompt, [=] {
    return rc::gen::apply([src](std::size_t p, std::size_t n) { return prompt_append(p, n, src); }, pick,
                          uniform_in<std::size_t>(1, 3 * tier_rows + 1));
  });
  add(c, live == 0 ? 0 : mix.store, [=] {
    return rc::gen::apply(
        [](std::size_t p, int which, bool d) { return store_command(p, which, d); }, pick,
        rc::gen::weightedOneOf<int>({{6, rc::gen::just(0)}, {2, rc::gen::just(1)}, {1, rc::gen::just(2)}}), disk);
  });
  add(c, live == 0 ? 0 : mix.load,
      [=] { return rc::gen::apply([](std::size_t p, bool d) { return load_command(p, d); }, pick, disk); });
  const std::size_t pending = m.pending().size();
  for (const auto& [weight, fail] : {std::pair{mix.complete, false}, {mix.fail, true}}) {
    const bool failing = fail;
    add(c, pending == 0 ? 0 : weight, [=] {
      return rc::gen::map(uniform_in<std::size_t>(0, pending + 1),
                          [failing](std::size_t p) { return end_command(p, failing, false); });
    });
    add(c, weight > 0 ? mix.stale : 0, [=] {
      return rc::gen::map(uniform_in<std::size_t>(0, 3),
                          [failing](std::size_t p) { return end_command(p, failing, true); });
    });
  }
  add(c, mix.evict, [=] {
    return rc::gen::apply([](std::int64_t t, std::int64_t n) { return evict_command(t, n); },
                          uniform_in<std::int64_t>(0, 3), uniform_in<std::int64_t>(1, 3));
  });
  add(c, mix.put, [=] {
    return rc::gen::apply(
        [src](std::size_t which, bool d, std::uint64_t b) { return put_command(which, d, tokens_of(b, 1), src); },
        uniform_in<std::size_t>(0, 4), disk, bits);
  });
  // Each choice shrinks towards the shorter trip: a put, the device letting go of everything, no tail.
  add(c, mix.round_trip, [=] {
    const auto plan = rc::gen::construct<round_trip_plan>(
        either(mix.via_put, mix.via_store), either(3, 1), rc::gen::arbitrary<bool>(),
        rc::gen::map(either(mix.evict_all, mix.evict_last), [](bool last) { return !last; }),
        rc::gen::map(either(1, 1),
                     [](bool whole) { return !whole; }),  // towards a device part: one put trip shows both
        uniform_in<std::size_t>(1, 3), tails(mix.store_tails), tails(mix.load_tails));
    return rc::gen::apply([src](round_trip_plan p, std::uint64_t b) { return round_trip(p, b, src); }, plan, bits);
  });
  // Creates whose prompts the tiers may hold: whole, cut to tier blocks, or one token more.
  add(c, mix.pool.reuse, [=] {
    return rc::gen::apply(
        [](std::size_t which, bool whole, std::uint64_t b) { return prompt_create(which, whole, tokens_of(b, b % 2)); },
        uniform_in<std::size_t>(0, 4), rc::gen::arbitrary<bool>(), bits);
  });
}

rc::Gen<tiered_command> op_gen(const tiered_mix& mix, const tiered_model& m, const gen_context& ctx) {
  if (auto start = long_start(m, ctx)) return *start;
  choices c;
  add_sequence_ops(c, mix.pool, m, ctx.can_decode, ctx.src);
  if (!m.live().empty()) add_appends(c, mix.pool, m.live().size(), m.config().block_size, ctx.src);
  tiered_mix own = mix;
  if (ctx.long_case) own.round_trip = 0;  // a long case's few ops after its bulk append, as every kind's (shapes.h)
  add_tier_ops(c, own, m, ctx);
  add_token_speculation(c, mix.pool.speculation, ctx);
  return weighted(std::move(c));
}

/// The most rows of a long case's pool (the model keys blocks and entries by their whole token prefix).
constexpr std::size_t long_tiered_rows = 512;

/// Small pools and tiers, so that each runs dry within a short trace; tier blocks of one to three device blocks.
config_gens config_gen(bool deep) {
  auto make = [](std::size_t blocks, std::size_t block_size, std::size_t factor, std::size_t host, std::size_t disk,
                 std::size_t dk, std::size_t dv) {
    cache_config c{cache_kind::tiered, blocks, dk, dv};
    c.block_size = block_size, c.host_factor = factor, c.host_blocks = host, c.disk_blocks = disk;
    return c;
  };
  const auto disk = rc::gen::weightedOneOf<std::size_t>(
      {{1, rc::gen::just<std::size_t>(0)}, {2, uniform_in<std::size_t>(1, deep ? 9 : 4)}});
  return {rc::gen::apply(make, uniform_in<std::size_t>(2, deep ? 25 : 9), uniform_in<std::size_t>(1, deep ? 5 : 4),
                         uniform_in<std::size_t>(1, 4), uniform_in<std::size_t>(1, deep ? 9 : 5), disk, width_gen(deep),
                         width_gen(deep)),
          rc::gen::apply(
              [make](std::size_t rows, std::size_t block_size, std::size_t factor, std::size_t dk, std::size_t dv) {
                return make(std::max<std::size_t>(std::min(rows, long_tiered_rows) / block_size, 2), block_size, factor,
                            8, 8, dk, dv);
              },
              long_rows_gen(), uniform_in<std::size_t>(4, 17), uniform_in<std::size_t>(1, 3), long_width_gen(),
              long_width_gen())};
}
}  // namespace

case_generator tiered_cases(tiered_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    // A round trip is one command of a dozen ops: the early, small cases still hold several.
    const double trace_scale = mix.round_trip == 0 ? 3 : p.long_traces ? 3 : 2;
    return run_commands<tiered_model>(
        p, impl, o, config_gen(o.deep),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return tiered_model(c, prof, pol);
        },
        [mix](const tiered_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); }, trace_scale,
        o.deep ? 0 : quick_max_commands);
  };
}

}  // namespace kvconform::kinds
