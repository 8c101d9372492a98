// Prefill, rollback and speculative rounds for the block-pool kinds' generators; include it only in generator sources.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/generate/commands.h"
#include "properties/generate/op_builders.h"
#include "properties/generate/pool_speculation_mix.h"

namespace kvconform {

/// What the shared generation needs of a pool kind: an append of n steps onto live handle h of model m, placed
/// after the first `keep` steps of `after` (a prefill of the same round the model has not applied yet; none for
/// nullptr), its rows (and tokens) drawn from `bits`.
template <class Model>
using pool_appender = std::function<op(const Model& m, std::int64_t h, const op* after, std::size_t keep, std::size_t n,
                                       std::uint64_t bits)>;

/// An append of a pool kind made a prefill of the same steps, with the queries its steps attend with, drawn from
/// the trace's row source.
using pool_prefiller = std::function<op(op append, const std::shared_ptr<const row_source>& src)>;

namespace pool_speculation_detail {
template <class Model>
std::optional<std::int64_t> newest(const Model& m, std::size_t from_newest) {
  const auto live = m.live();
  if (live.empty()) return std::nullopt;  // shrinking removed every sequence before this op
  return live[live.size() - 1 - from_newest % live.size()];
}

/// An append turned into a prefill: each step's query is the input class's (with a sink logit where declared).
inline op as_prefill(op o, const row_source& src) {
  const std::size_t n = o.k.shape.size() == 2 ? o.k.shape[0] : 1;
  if (o.k.shape.size() == 1) o.k.shape = {1, o.k.shape[0]};
  if (o.v.shape.size() == 1) o.v.shape = {1, o.v.shape[0]};
  o.kind = op_kind::prefill;
  o.q.shape = {n, src.d_k()};
  for (std::size_t i = 0; i < n; ++i) o.q.data.insert(o.q.data.end(), src.query().begin(), src.query().end());
  attach_sinks(o, src, static_cast<std::int64_t>(n));  // a cache declaring learned sinks gets the prefill's logit
  return o;
}

/// An append made a prefill: by `to_prefill`, else with the input class's query for every step (as_prefill).
inline std::function<op(op)> prefiller(pool_prefiller to_prefill, std::shared_ptr<const row_source> src) {
  return [to_prefill = std::move(to_prefill), src = std::move(src)](op a) {
    return to_prefill ? to_prefill(std::move(a), src) : as_prefill(std::move(a), *src);
  };
}

/// Prefill steps for `rule` 0..3: one, to the end of the last block and one more, a block and one more, or
/// `n`; never more than fit (at least one, so that a full pool refuses some).
inline std::size_t prefill_steps(int rule, std::size_t n, std::size_t size, std::size_t block, std::size_t room) {
  const std::size_t to_end = block - size % block;
  const std::size_t want = rule == 0 ? 1 : rule == 1 ? to_end + 1 : rule == 2 ? block + 1 : n;
  return std::max<std::size_t>(std::min(want, room), 1);
}

/// Rollback counts for `rule` 0..4 of a sequence of `size` rows: none, one, the drafts just verified, back to
/// one row before the last block boundary (across it), every step; `bad` 0..1: one more than held, -1.
inline std::int64_t rollback_count(int rule, bool bad, std::size_t size, std::size_t drafts, std::size_t block) {
  if (bad) return rule % 2 ? -1 : static_cast<std::int64_t>(size) + 1;
  const std::size_t across = size % block + 1, counts[] = {0, 1, drafts, across, size};
  return static_cast<std::int64_t>(std::min(counts[rule % 5], size));
}

/// At most `want` (at least 1) of `size` steps, fewer where that leaves the last of blocks of `block` rows partly
/// filled, so that the next append meets the block the rollback kept.
inline std::int64_t into_block(std::size_t want, std::size_t size, std::size_t block) {
  std::size_t c = std::clamp<std::size_t>(want, 1, std::max<std::size_t>(size, 1));
  while (c > 1 && (size - c) % block == 0) --c;
  return static_cast<std::int64_t>(std::min(c, size));
}

using made = std::optional<std::vector<op>>;

/// A prefill onto a live sequence, or (`stale`) the same onto the next handle, which names none yet.
template <class Model>
made prefill_ops(const Model& m, const pool_appender<Model>& append, const std::function<op(op)>& prefill,
                 std::size_t p, int rule, std::size_t n, std::uint64_t b, bool stale = false) {
  const auto h = newest(m, p);
  if (!h) return std::nullopt;
  const std::size_t k = prefill_steps(rule, n, m.size(*h), m.config().block_size, m.room(*h));
  op o = prefill(append(m, *h, nullptr, 0, k, b));
  if (stale) o.seq = m.handles();
  return std::vector<op>{o};
}

template <class Model>
made rollback_ops(const Model& m, std::size_t p, int rule, bool bad) {
  op o{.kind = op_kind::rollback};
  if (bad && rule == 2) return o.seq = m.handles(), o.count = 0, std::vector<op>{o};  // the next, unissued handle
  const auto h = newest(m, p);
  if (!h) return std::nullopt;
  o.seq = *h, o.count = rollback_count(rule, bad, m.size(*h), m.drafts(), m.config().block_size);
  return std::vector<op>{o};
}

/// k drafts verified by one prefill, j of them accepted, the other k - j rolled back (for odd `b` in two rollbacks
/// in a row), the bonus appended where the first rejected draft was.
template <class Model>
made round_ops(const Model& m, const pool_appender<Model>& append, const std::function<op(op)>& prefill, std::size_t p,
               std::size_t drafts, std::size_t accepted, std::uint64_t b) {
  const auto h = newest(m, p);
  if (!h || m.room(*h) < 2) return std::nullopt;  // the drafts and the bonus must fit
  const std::size_t k = std::min(drafts, m.room(*h) - 1), j = std::min(accepted, k);
  const auto rejected = static_cast<std::int64_t>(k - j);
  const bool split = b % 2 && rejected > 0;
  std::vector<op> ops{prefill(append(m, *h, nullptr, 0, k, b))};
  if (split) ops.push_back(op{.kind = op_kind::rollback, .seq = *h, .count = 1});
  ops.push_back(op{.kind = op_kind::rollback, .seq = *h, .count = rejected - split});
  ops.push_back(append(m, *h, &ops.front(), j, 1, b + 1));
  return ops;
}

/// n rows appended to h (and with `fork` h forked), then `who` rolled back into them (never past them: the op after
/// continues from what it kept), then, when `who` is h, one more row where the kept block takes it.
template <class Model>
made rollback_into(const Model& m, const pool_appender<Model>& append, std::int64_t h, std::int64_t who, std::size_t n,
                   std::size_t back, std::uint64_t b, bool fork) {
  const std::size_t bs = m.config().block_size, rows = std::min(n, m.room(h)), size = m.size(h) + rows;
  if (rows == 0) return std::nullopt;
  const auto c = std::min<std::int64_t>(into_block(back, size, bs), static_cast<std::int64_t>(rows));
  std::vector<op> ops{append(m, h, nullptr, 0, rows, b)};
  if (fork) ops.push_back(op{.kind = op_kind::fork, .seq = h});
  ops.push_back(op{.kind = op_kind::rollback, .seq = who, .count = c});
  // The fork's own append would need its handle in the model: the sibling's rows show what the rollback did.
  if (who == h) ops.push_back(append(m, h, &ops.front(), rows - static_cast<std::size_t>(c), 1, b + 1));
  return ops;
}
}  // namespace pool_speculation_detail

/// Adds the speculation ops of `mix` to `c` (ops a cache lacks the capability for are not drawn); a prefill is
/// `to_prefill` of an append (the input class's query for every step when none is given).
template <class Model>
void add_pool_speculation(std::vector<std::pair<int, rc::Gen<command_ptr<Model>>>>& c, const pool_speculation_mix& mix,
                          const gen_context& ctx, pool_appender<Model> append, pool_prefiller to_prefill = nullptr) {
  namespace d = pool_speculation_detail;
  const auto src = ctx.src;
  const auto prefill = d::prefiller(std::move(to_prefill), src);
  const bool prefills = ctx.caps.has(capability::prefill), rolls = ctx.caps.has(capability::rollback);
  // A deferred group named `label`, made when it runs by make(model, picked sequence, drawn values...).
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, 4));
  auto add = [&](int weight, bool can, const char* label, auto make, auto... gens) {
    if (weight <= 0 || !can) return;
    c.emplace_back(weight, lazy_gen([=] {  // built when drawn from
                     const auto made = [=](std::size_t p, auto... drawn) {
                       return deferred_ops<Model>(label, [=](const Model& m) { return make(m, p, drawn...); });
                     };
                     return rc::gen::apply(made, pick, gens...);
                   }));
  };
  const auto bits = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  add(
      mix.prefill, prefills, "prefill",
      [=](const Model& m, std::size_t p, int rule, std::size_t n, std::uint64_t b) {
        return d::prefill_ops(m, append, prefill, p, rule, n, b);
      },
      uniform_in(0, 4), uniform_in<std::size_t>(1, 9), bits);
  add(
      mix.bad_rollback, prefills, "stale prefill",
      [=](const Model& m, std::size_t p, std::size_t n, std::uint64_t b) {
        return d::prefill_ops(m, append, prefill, p, 0, n, b, true);
      },
      uniform_in<std::size_t>(1, 4), bits);
  for (const bool bad : {false, true})
    add(
        bad ? mix.bad_rollback : mix.rollback, rolls, bad ? "bad rollback" : "rollback",
        [=](const Model& m, std::size_t p, int rule) { return d::rollback_ops(m, p, rule, bad); },
        uniform_in(0, bad ? 3 : 5));
  add(
      mix.round, prefills && rolls, "speculative round",
      [=](const Model& m, std::size_t p, std::size_t k, std::size_t j, std::uint64_t b) {
        return d::round_ops(m, append, prefill, p, k, j, b);
      },
      uniform_in<std::size_t>(1, 9), uniform_in<std::size_t>(0, 9), bits);
  add(
      mix.block_rollback, rolls, "rollback into a block",
      [=](const Model& m, std::size_t p, std::size_t blocks, std::size_t back, std::uint64_t b) -> d::made {
        const auto h = d::newest(m, p);
        if (!h) return std::nullopt;
        const std::size_t bs = m.config().block_size;  // to the end of the last block, and whole blocks more
        return d::rollback_into(m, append, *h, *h, bs - m.size(*h) % bs + blocks * bs, back, b, false);
      },
      uniform_in<std::size_t>(0, 2), uniform_in<std::size_t>(1, 4), bits);
  add(
      mix.shared_rollback, rolls, "rollback into a shared block",
      [=](const Model& m, std::size_t p, std::size_t n, std::size_t back, std::uint64_t b) -> d::made {
        const auto h = d::newest(m, p);
        if (!h) return std::nullopt;
        // Either side of the fork rolls back; the other keeps the block as it was.
        return d::rollback_into(m, append, *h, b % 2 ? m.handles() : *h, n, back, b, true);
      },
      uniform_in<std::size_t>(1, 6), uniform_in<std::size_t>(1, 4), bits);
}

}  // namespace kvconform
