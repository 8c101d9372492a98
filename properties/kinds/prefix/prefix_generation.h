// The prefix kind's op builders, templates over the pool model (prefix_model, or a kind built on it: tiered).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "properties/generate/commands.h"
#include "properties/generate/pool_speculation.h"
#include "properties/generate/shapes.h"
#include "properties/kinds/prefix/parts.h"

namespace kvconform::kinds::prefix_generation {

template <class M>
using pool_command = command_ptr<M>;
using made_op = std::optional<op>;
template <class M>
using pool_choices = std::vector<std::pair<int, rc::Gen<pool_command<M>>>>;
using row_source_ptr = std::shared_ptr<const row_source>;

/// Two tokens: blocks repeat often, so prefixes are found again and equal blocks follow different prefixes.
inline constexpr std::int64_t vocabulary = 2;

/// An append of `tokens` after `before`: the rows of each step depend only on the whole token
/// prefix up to it (as a model's K/V do), so rows found in the cache equal rows appended again.
inline op token_append(const row_source& src, std::int64_t seq, const std::vector<std::int64_t>& before,
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
inline std::vector<std::int64_t> tokens_of(std::uint64_t bits, std::size_t n) {
  std::vector<std::int64_t> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((bits >> (i % 64)) % vocabulary);
  return t;
}

/// An append to the `from_newest`-th newest live sequence (wrapping), decided when it runs; `bad`
/// 1 adds a token, 2 widens the keys.
template <class M>
pool_command<M> append_command(const char* label, std::size_t from_newest, rows_rule rule, std::uint64_t bits,
                               int ranks, int bad, row_source_ptr src) {
  return std::make_shared<const deferred_command<M>>(label, [=](const M& m) -> made_op {
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
template <class M>
pool_command<M> sequence_command(op_kind kind, std::size_t from_newest, bool stale, bool bad, row_source_ptr src) {
  const std::string label = (stale ? "stale " : "") + std::string(to_string(kind));
  return std::make_shared<const deferred_command<M>>(label, [=](const M& m) -> made_op {
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
template <class M>
pool_command<M> create_command(std::size_t which, std::size_t keep, std::vector<std::int64_t> extra,
                               std::int64_t key = 0) {
  return std::make_shared<const deferred_command<M>>("create", [=](const M& m) -> made_op {
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

/// Adds the commands `make()` generates at `weight`, built only when drawn from (lazy_gen).
template <class M, class Make>
void add(pool_choices<M>& c, int weight, Make make) {
  if (weight > 0) c.emplace_back(weight, lazy_gen(std::move(make)));
}

/// Appends of the live sequences: ordinary ones (fitting), fills of the whole pool (evicting),
/// overfills (refused), empty ones, and malformed ones (a token too many, a wrong key width).
template <class M>
void add_appends(pool_choices<M>& c, const prefix_mix& mix, std::size_t live, std::size_t block, row_source_ptr src) {
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live));
  const auto bits = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  // rule() and bad() draw the rows and the malformation
  auto appends = [&](int weight, const char* label, auto rule, auto bad) {
    add(c, weight, [=] {
      return rc::gen::apply([src, label](std::size_t p, rows_rule r, std::uint64_t b, int ranks,
                                         int x) { return append_command<M>(label, p, r, b, ranks, x, src); },
                            pick, rule(), bits, uniform_in(0, 4), bad());
    });
  };
  const auto none = [] { return rc::gen::just(0); };
  auto rows = [](bool all, std::size_t most) {
    return [=] { return rc::gen::construct<rows_rule>(rc::gen::just(all), uniform_in<std::size_t>(1, most)); };
  };
  auto just = [](rows_rule r) { return [=] { return rc::gen::just(r); }; };
  appends(mix.append, "append", rows(false, 2 * block + 2), none);
  appends(mix.fill, "fill", just({true, 0}), none);
  appends(mix.overfill, "overfill", rows(true, 3), none);
  appends(mix.empty, "empty append", just({false, 0}), none);
  appends(mix.bad_shape, "bad shape", rows(false, 3), [] { return uniform_in(1, 3); });
}

/// Creates (fresh, or looking up a prefix held before), forks, releases, decodes and stale handles.
template <class M>
void add_sequence_ops(pool_choices<M>& c, const prefix_mix& mix, const M& m, bool can_decode, row_source_ptr src) {
  const std::size_t live = m.live().size(), block = m.config().block_size;
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live + 1));
  const int creates = live == 0 ? std::max(mix.create, 1) : mix.create;  // nothing else can come first
  if (mix.keys) {  // a lookup names its sequence's key, or more often another (which must find nothing of its)
    const auto key = rc::gen::weightedOneOf<std::int64_t>(
        {{1, rc::gen::just<std::int64_t>(-1)}, {3, uniform_in<std::int64_t>(0, 3)}});
    add(c, creates, [=] {
      return rc::gen::apply(
          [](std::uint64_t b, std::int64_t k) { return create_command<M>(0, 0, tokens_of(b, b % 3), k); },
          rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), key);
    });
    add(c, mix.reuse, [=] {
      return rc::gen::apply([](std::size_t which, std::size_t keep, std::uint64_t b,
                               std::int64_t k) { return create_command<M>(which, keep, tokens_of(b, b % 2), k); },
                            uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3 * block + 2),
                            rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), key);
    });
  } else {
    add(c, creates, [] {
      return rc::gen::map(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()),
                          [](std::uint64_t b) { return create_command<M>(0, 0, tokens_of(b, b % 3)); });
    });
    add(c, mix.reuse, [=] {
      return rc::gen::apply([](std::size_t which, std::size_t keep,
                               std::uint64_t b) { return create_command<M>(which, keep, tokens_of(b, b % 2)); },
                            uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3 * block + 2),
                            rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
    });
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
      add(c, weight, [=] {
        return rc::gen::map(pick, [=](std::size_t p) { return sequence_command<M>(kind, p, gone, wide, src); });
      });
  }
}

/// A long case's start (shapes.h): a sequence, then one bulk append of most of the pool; nullopt once it is made.
template <class M>
std::optional<rc::Gen<pool_command<M>>> long_start(const M& m, const gen_context& ctx) {
  if (!ctx.long_case || m.available_blocks() != m.config().capacity) return std::nullopt;
  if (m.live().empty()) return rc::gen::just(create_command<M>(0, 0, {}));
  const std::int64_t h = m.live().back();
  return rc::gen::apply(
      [src = ctx.src, h, before = m.tokens(h)](std::size_t n, std::uint64_t bits) {
        return command<M>(token_append(*src, h, before, tokens_of(bits, n), 0));
      },
      long_fill_gen(m.room(h)), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

/// The pool's prefills, rollbacks and speculative rounds (pool_speculation.h) with tokens: a round's bonus follows
/// the drafts it accepted, its rows depending on the tokens before it.
template <class M>
void add_token_speculation(pool_choices<M>& c, const pool_speculation_mix& mix, const gen_context& ctx) {
  add_pool_speculation<M>(c, mix, ctx,
                          [src = ctx.src](const M& pool, std::int64_t h, const op* after, std::size_t keep,
                                          std::size_t n, std::uint64_t bits) {
                            std::vector<std::int64_t> before = pool.tokens(h);
                            if (after)
                              before.insert(before.end(), after->tokens.begin(),
                                            after->tokens.begin() + static_cast<std::ptrdiff_t>(keep));
                            return token_append(*src, h, before, tokens_of(bits, n), 0);
                          });
}

}  // namespace kvconform::kinds::prefix_generation
