// RapidCheck stateful generation for the prefix kind: tokens from a small vocabulary, prefixes looked up again.
#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/models/prefix_model.h"
#include "properties/generate/commands.h"
#include "properties/generate/pool_speculation.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds {

namespace {
using prefix_command = command_ptr<prefix_model>;
using made_op = std::optional<op>;
using choices = std::vector<std::pair<int, rc::Gen<prefix_command>>>;
using row_source_ptr = std::shared_ptr<const row_source>;

/// Two tokens: blocks repeat often, so prefixes are found again and equal blocks follow different prefixes.
constexpr std::int64_t vocabulary = 2;

/// An append of `tokens` after `before`: the rows of each step depend only on the whole token
/// prefix up to it (as a model's K/V do), so rows found in the cache equal rows appended again.
op token_append(const row_source& src, std::int64_t seq, const std::vector<std::int64_t>& before,
                const std::vector<std::int64_t>& tokens, int ranks) {
  op o;
  o.kind = op_kind::append, o.seq = seq, o.tokens = tokens;
  std::string prefix;
  for (std::int64_t t : before) prefix += static_cast<char>('a' + t);
  // Each row's seed is the hash of its whole prefix, continued one token at a time: long prefixes stay linear.
  std::uint64_t hash = fnv1a(prefix);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const char token = static_cast<char>('a' + tokens[i]);
    hash = fnv1a({&token, 1}, hash);
    src.rows(static_cast<std::int64_t>(before.size() + i), 1, hash, o.k.data, o.v.data);
  }
  const std::size_t n = tokens.size();
  o.k.shape = {n, src.d_k()}, o.v.shape = {n, src.d_v()};
  if (n == 1 && (ranks & 1)) o.k.shape = {src.d_k()};
  if (n == 1 && (ranks & 2)) o.v.shape = {src.d_v()};
  return o;
}

/// How many rows an append has, decided when it runs: `capped`, n but no more than fit; `pool`,
/// all the room plus n (n = 0 fills the pool, evicting what it must; n > 0 is refused).
struct rows_rule {
  bool pool = false;
  std::size_t n = 0;
  std::size_t rows(std::size_t room) const { return pool ? std::max<std::size_t>(room + n, 1) : std::min(n, room); }
};

/// n tokens drawn from the bits of `bits` (all zeros as it shrinks).
std::vector<std::int64_t> tokens_of(std::uint64_t bits, std::size_t n) {
  std::vector<std::int64_t> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((bits >> (i % 64)) % vocabulary);
  return t;
}

/// An append to the `from_newest`-th newest live sequence (wrapping), decided when it runs; `bad`
/// 1 adds a token, 2 widens the keys.
prefix_command append_command(const char* label, std::size_t from_newest, rows_rule rule, std::uint64_t bits, int ranks,
                              int bad, row_source_ptr src) {
  return std::make_shared<const deferred_command<prefix_model>>(label, [=](const prefix_model& m) -> made_op {
    const auto live = m.live();
    if (live.empty()) return std::nullopt;  // shrinking removed every sequence before this op
    const std::int64_t h = live[live.size() - 1 - from_newest % live.size()];
    const std::vector<std::int64_t> tokens = tokens_of(bits, rule.rows(m.room(h)));
    op o = token_append(*src, h, m.tokens(h), tokens, ranks);
    if (bad == 1) o.tokens.push_back(0);                                                    // one token too many
    if (bad == 2) o.k.shape.back() += 1, o.k.data.resize(o.k.data.size() + tokens.size());  // wrong key width
    return o;
  });
}

/// An op naming the `from_newest`-th newest live sequence, or (stale) a handle that names none; a
/// decode's query is one too wide when `bad`.
prefix_command sequence_command(op_kind kind, std::size_t from_newest, bool stale, bool bad, row_source_ptr src) {
  const std::string label = (stale ? "stale " : "") + std::string(to_string(kind));
  return std::make_shared<const deferred_command<prefix_model>>(label, [=](const prefix_model& m) -> made_op {
    std::vector<std::int64_t> handles = m.live();
    if (stale) {
      const auto live = handles;
      handles.clear();
      for (std::int64_t h = 0; h <= m.handles(); ++h)
        if (!std::binary_search(live.begin(), live.end(), h)) handles.push_back(h);
    }
    if (handles.empty()) return std::nullopt;
    op o;
    o.kind = kind, o.seq = handles[handles.size() - 1 - from_newest % handles.size()];
    if (kind == op_kind::decode) o.q = tensor::vector(src->query());
    if (bad) o.q.data.push_back(0.5), o.q.shape = {o.q.data.size()};
    return o;
  });
}

/// A create looking up the first `keep` tokens of the `which`-th newest token sequence ever held
/// (plus `extra` tokens), or `extra` tokens alone when there is none: hits, partial hits and misses. Its extra key is
/// `key`, or that sequence's when `key` is negative.
prefix_command create_command(std::size_t which, std::size_t keep, std::vector<std::int64_t> extra,
                              std::int64_t key = 0) {
  return std::make_shared<const deferred_command<prefix_model>>("create", [=](const prefix_model& m) -> made_op {
    op o;
    o.kind = op_kind::create;
    o.extra_key = std::max<std::int64_t>(key, 0);
    const auto& history = m.history();
    if (!history.empty()) {
      const auto& from = history[history.size() - 1 - which % history.size()];
      o.tokens.assign(from.tokens.begin(),
                      from.tokens.begin() + static_cast<std::ptrdiff_t>(std::min(keep, from.tokens.size())));
      if (key < 0) o.extra_key = from.extra_key;
    }
    o.tokens.insert(o.tokens.end(), extra.begin(), extra.end());
    return o;
  });
}

void add(choices& c, int weight, rc::Gen<prefix_command> g) {
  if (weight > 0) c.emplace_back(weight, std::move(g));
}

/// Appends of the live sequences: ordinary ones (fitting), fills of the whole pool (evicting),
/// overfills (refused), empty ones, and malformed ones (a token too many, a wrong key width).
void add_appends(choices& c, const prefix_mix& mix, std::size_t live, std::size_t block, row_source_ptr src) {
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live));
  const auto bits = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  auto appends = [&](int weight, const char* label, rc::Gen<rows_rule> rule, rc::Gen<int> bad) {
    add(c, weight,
        rc::gen::apply([src, label](std::size_t p, rows_rule r, std::uint64_t b, int ranks,
                                    int x) { return append_command(label, p, r, b, ranks, x, src); },
                       pick, std::move(rule), bits, uniform_in(0, 4), std::move(bad)));
  };
  const auto none = rc::gen::just(0);
  appends(mix.append, "append",
          rc::gen::construct<rows_rule>(rc::gen::just(false), uniform_in<std::size_t>(1, 2 * block + 2)), none);
  appends(mix.fill, "fill", rc::gen::just(rows_rule{true, 0}), none);
  appends(mix.overfill, "overfill", rc::gen::construct<rows_rule>(rc::gen::just(true), uniform_in<std::size_t>(1, 3)),
          none);
  appends(mix.empty, "empty append", rc::gen::just(rows_rule{false, 0}), none);
  appends(mix.bad_shape, "bad shape",
          rc::gen::construct<rows_rule>(rc::gen::just(false), uniform_in<std::size_t>(1, 3)), uniform_in(1, 3));
}

/// Creates (fresh, or looking up a prefix held before), forks, releases, decodes and stale handles.
void add_sequence_ops(choices& c, const prefix_mix& mix, const prefix_model& m, bool can_decode, row_source_ptr src) {
  const std::size_t live = m.live().size(), block = m.config().block_size;
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live + 1));
  const int creates = live == 0 ? std::max(mix.create, 1) : mix.create;  // nothing else can come first
  if (mix.keys) {  // a lookup names its sequence's key, or more often another (which must find nothing of its)
    const auto key = rc::gen::weightedOneOf<std::int64_t>(
        {{1, rc::gen::just<std::int64_t>(-1)}, {3, uniform_in<std::int64_t>(0, 3)}});
    add(c, creates,
        rc::gen::apply([](std::uint64_t b, std::int64_t k) { return create_command(0, 0, tokens_of(b, b % 3), k); },
                       rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), key));
    add(c, mix.reuse,
        rc::gen::apply([](std::size_t which, std::size_t keep, std::uint64_t b,
                          std::int64_t k) { return create_command(which, keep, tokens_of(b, b % 2), k); },
                       uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3 * block + 2),
                       rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), key));
  } else {
    add(c, creates, rc::gen::map(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), [](std::uint64_t b) {
          return create_command(0, 0, tokens_of(b, b % 3));
        }));
    add(c, mix.reuse,
        rc::gen::apply([](std::size_t which, std::size_t keep,
                          std::uint64_t b) { return create_command(which, keep, tokens_of(b, b % 2)); },
                       uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3 * block + 2),
                       rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>())));
  }
  const int decode = can_decode ? mix.decode : 0, bad_decode = can_decode ? mix.bad_decode : 0;
  for (const auto& [weight, which, stale, bad] : {std::tuple{mix.fork, op_kind::fork, false, false},
                                                  {mix.release, op_kind::release, false, false},
                                                  {decode, op_kind::decode, false, false},
                                                  {bad_decode, op_kind::decode, false, true},
                                                  {mix.stale, op_kind::release, true, false}}) {
    const op_kind kind = which;  // plain copies: clang 14 cannot capture structured bindings
    const bool gone = stale, wide = bad;
    if (live > 0 || gone)
      add(c, weight, rc::gen::map(pick, [=](std::size_t p) { return sequence_command(kind, p, gone, wide, src); }));
  }
}

rc::Gen<prefix_command> op_gen(const prefix_mix& mix, const prefix_model& m, const gen_context& ctx) {
  // A long case (shapes.h) starts with a sequence and one bulk append of most of the pool.
  if (ctx.long_case && m.available_blocks() == m.config().capacity) {
    if (m.live().empty()) return rc::gen::just(create_command(0, 0, {}));
    const std::int64_t h = m.live().back();
    return rc::gen::apply(
        [src = ctx.src, h, before = m.tokens(h)](std::size_t n, std::uint64_t bits) {
          return command<prefix_model>(token_append(*src, h, before, tokens_of(bits, n), 0));
        },
        long_fill_gen(m.room(h)), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
  }
  choices c;
  add_sequence_ops(c, mix, m, ctx.can_decode, ctx.src);
  if (!m.live().empty()) add_appends(c, mix, m.live().size(), m.config().block_size, ctx.src);
  // A round's bonus follows the drafts it accepted: its rows depend on the tokens before it.
  add_pool_speculation<prefix_model>(c, mix.speculation, ctx,
                                     [src = ctx.src](const prefix_model& pool, std::int64_t h, const op* after,
                                                     std::size_t keep, std::size_t n, std::uint64_t bits) {
                                       std::vector<std::int64_t> before = pool.tokens(h);
                                       if (after)
                                         before.insert(before.end(), after->tokens.begin(),
                                                       after->tokens.begin() + static_cast<std::ptrdiff_t>(keep));
                                       return token_append(*src, h, before, tokens_of(bits, n), 0);
                                     });
  return weighted(std::move(c));
}

/// The most rows of a long case's pool: the model keys each full block by its whole token prefix,
/// so its cost grows with the square of the rows.
constexpr std::size_t long_prefix_rows = 1024;

/// Small pools and blocks, so that the pool runs dry and blocks are evicted within a short trace;
/// a long case's pool holds long_rows_min to long_prefix_rows rows in blocks of 4 to 16 (shapes.h).
config_gens config_gen(bool long_traces, bool deep) {
  const std::size_t max_blocks = deep ? 32 : (long_traces ? 10 : 6), max_block_size = deep ? 8 : 3;
  auto make = [](std::size_t blocks, std::size_t block_size, std::size_t dk, std::size_t dv) {
    cache_config c{cache_kind::prefix, blocks, dk, dv};
    c.block_size = block_size;
    return c;
  };
  return {rc::gen::apply(make, uniform_in<std::size_t>(1, max_blocks + 1),
                         uniform_in<std::size_t>(1, max_block_size + 1), width_gen(deep), width_gen(deep)),
          rc::gen::apply(
              [make](std::size_t rows, std::size_t block_size, std::size_t dk, std::size_t dv) {
                return make(std::min(rows, long_prefix_rows) / block_size, block_size, dk, dv);
              },
              long_rows_gen(), uniform_in<std::size_t>(4, 17), long_width_gen(), long_width_gen())};
}
}  // namespace

/// Ends lru_scenario: released whole blocks queued before a free block, then a block's worth taken.
void queued_free_block(session& s, const cache_config& c, const row_source& src, std::int64_t handle);

void lru_scenario(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) {
  std::mt19937_64 rng(seed);
  const auto classes = all_input_classes();
  const row_source src(classes[seed % classes.size()], c.d_k, c.d_v, seed);
  std::int64_t handle = 0;
  // Cache `size` distinct prefixes (one or two blocks, their first tokens distinct): each created,
  // filled and released, so its blocks are evictable in this order.
  std::vector<std::vector<std::int64_t>> prefixes;
  for (std::size_t i = 0; i < size; ++i) {
    std::vector<std::int64_t> t = {static_cast<std::int64_t>(100 + i)};
    while (t.size() < c.block_size * (1 + rng() % 2)) t.push_back(static_cast<std::int64_t>(rng() % 4));
    prefixes.push_back(t);
  }
  auto run = [&](op o) { return s.step(o); };
  auto create = [&](const std::vector<std::int64_t>& t) { return run(op{.kind = op_kind::create, .tokens = t}); };
  auto release = [&](std::int64_t h) { return run(op{.kind = op_kind::release, .seq = h}); };
  for (const auto& t : prefixes)
    if (!create({}) || !run(token_append(src, handle, {}, t, 0)) || !release(handle++)) return;
  // Reuse some of them, oldest first or not, and release them again: they become the most recent.
  for (std::size_t r = rng() % (size + 1); r > 0; --r)
    if (!create(prefixes[rng() % size]) || !release(handle++)) return;
  // A fresh sequence takes as many rows as the pool holds, evicting the least recently released.
  const std::size_t rows = c.capacity * c.block_size - rng() % (c.block_size * size + 1);
  std::vector<std::int64_t> fresh(rows);
  for (auto& t : fresh) t = 1000 + static_cast<std::int64_t>(rng() % 4);
  if (!create({}) || !run(token_append(src, handle++, {}, fresh, 0))) return;
  // Which prefixes are still found says which blocks went.
  for (const auto& t : prefixes)
    if (!create(t)) return;
  for (std::int64_t h = handle - 1; h < handle + static_cast<std::int64_t>(size); ++h)  // the pool empties
    if (!release(h)) return;
  queued_free_block(s, c, src, handle + static_cast<std::int64_t>(size));
}

void queued_free_block(session& s, const cache_config& c, const row_source& src, std::int64_t handle) {
  // Whole blocks of one sequence, released before another's partly filled one: a block's worth then takes the free
  // block, unless the cache takes the oldest unheld block first (free_order=one_queue) and evicts a cached one.
  const std::size_t bs = c.block_size, first = c.capacity / 2 * bs;
  if (bs < 2 || c.capacity < 2) return;
  std::vector<std::int64_t> cached(first, 2000), tail(c.capacity * bs - first - 1, 3000), probe(bs, 4000);
  auto run = [&](op o) { return s.step(o); };
  auto create = [&](const std::vector<std::int64_t>& t) { return run(op{.kind = op_kind::create, .tokens = t}); };
  auto release = [&](std::int64_t h) { return run(op{.kind = op_kind::release, .seq = h}); };
  const std::int64_t a = handle, b = handle + 1;
  if (!create({}) || !run(token_append(src, a, {}, cached, 0)) || !create({}) ||
      !run(token_append(src, b, {}, tail, 0)) || !release(a) || !release(b) || !create({}) ||
      !run(token_append(src, b + 1, {}, probe, 0)))
    return;
  create(cached);
}

case_generator prefix_cases(prefix_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    // Many sequences come and go: creates, releases and lookups need longer traces than one sequence.
    const double trace_scale = p.long_traces ? 4 : 2;
    return run_commands<prefix_model>(
        p, impl, o, config_gen(p.long_traces, o.deep),
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return prefix_model(c, prof, pol);
        },
        [mix](const prefix_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); }, trace_scale);
  };
}

}  // namespace kvconform::kinds
