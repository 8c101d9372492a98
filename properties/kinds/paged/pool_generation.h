// RapidCheck stateful generation for the paged pools (paged, latent): ops on sequences drawn from the model's live set.
#pragma once

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "properties/generate/commands.h"
#include "properties/generate/op_builders.h"
#include "properties/generate/pool_speculation.h"
#include "properties/kinds/paged/parts.h"

/// The generation of a paged pool whose ops `Build` makes: `Build::model` (a block_pool_model), and
/// Build::append(target, n, ranks, seed), Build::bad_shape(target, variant, seed) and Build::decode(target, bad,
/// variant), as the shared op builders (op_builders.h) take them; optionally Build::prefill(append, source), the
/// kind's prefill of an append's steps.
namespace kvconform::kinds::pool_generation {

using made_op = std::optional<op>;

/// Which live sequence an op names, decided when it runs: the `from_newest`-th newest (wrapping),
/// among those whose next append copies a shared block when `copying` and there are any.
/// Shrinks towards the newest sequence, which after a fork is the fork itself.
struct pick_rule {
  bool copying = false;
  std::size_t from_newest = 0;
};

template <class Model>
std::optional<std::int64_t> resolve(const Model& m, pick_rule r) {
  std::vector<std::int64_t> live = m.live(), copying;
  std::copy_if(live.begin(), live.end(), std::back_inserter(copying),
               [&m](std::int64_t h) { return m.copies_on_append(h); });
  const auto& from = r.copying && !copying.empty() ? copying : live;
  if (from.empty()) return std::nullopt;
  return from[from.size() - 1 - r.from_newest % from.size()];
}

/// The newest sequence half the time (forks of forks and appends to a fresh fork come often),
/// else any; a third of picks look for a sequence whose next append copies a shared block.
inline rc::Gen<pick_rule> pick_gen(std::size_t live) {
  return rc::gen::construct<pick_rule>(rc::gen::weightedElement<bool>({{2, false}, {1, true}}),
                                       rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live)));
}

/// Where an append of a live sequence may end, when it runs.
struct fit {
  std::size_t room = 0;          ///< the most rows the pool takes without preempting
  std::size_t to_block_end = 0;  ///< rows up to the end of the last block (a whole block when it is full)
};

/// How many rows an append has, decided when it runs: `capped`, n but no more than fit (at
/// least one); `pool`, the room plus n (fill: n = 0 takes the last free slot; overfill: n >= 1);
/// `block`, exactly to the end of the sequence's last block.
struct rows_rule {
  enum class end { capped, pool, block } to = end::capped;
  std::size_t n = 0;
  std::size_t rows(fit f) const {
    if (to == end::pool) return std::max<std::size_t>(f.room + n, 1);
    if (to == end::block) return f.to_block_end;
    return std::min(n, std::max<std::size_t>(f.room, 1));
  }
};

inline op sequence_op(op_kind kind, std::int64_t handle) {
  op o;
  o.kind = kind;
  o.seq = handle;
  return o;
}

/// A command on the live sequence `pick` names; `make(target, fit)` builds its op.
template <class Build, class Make>
command_ptr<typename Build::model> on_live(std::string label, pick_rule pick, std::shared_ptr<const row_source> src,
                                           Make make) {
  return std::make_shared<const deferred_command<typename Build::model>>(
      std::move(label), [=](const typename Build::model& m) -> made_op {
        const auto h = resolve(m, pick);
        if (!h) return std::nullopt;  // shrinking removed every sequence before this op
        const std::size_t size = m.size(*h), block = m.config().block_size;
        return make(op_target{src, static_cast<std::int64_t>(size), *h}, fit{m.room(*h), block - size % block});
      });
}

/// Ops naming a handle that names no sequence: released, preempted, a refused fork's, or the
/// next one, not issued yet.
template <class Build>
command_ptr<typename Build::model> stale_command(op_kind kind, std::size_t which, std::shared_ptr<const row_source> src,
                                                 std::uint64_t seed) {
  using model = typename Build::model;
  return std::make_shared<const deferred_command<model>>(std::string("stale ") + to_string(kind),
                                                         [=](const model& m) -> made_op {
                                                           std::vector<std::int64_t> stale;
                                                           const auto live = m.live();
                                                           for (std::int64_t h = 0; h <= m.handles(); ++h)
                                                             if (!std::binary_search(live.begin(), live.end(), h))
                                                               stale.push_back(h);
                                                           const op_target t{src, 0, stale[which % stale.size()]};
                                                           if (kind == op_kind::append)
                                                             return Build::append(t, 1, 0, seed);
                                                           if (kind == op_kind::decode)
                                                             return Build::decode(t, false, 0);
                                                           return sequence_op(kind, t.seq);
                                                         });
}

template <class Model>
using choices = std::vector<std::pair<int, rc::Gen<command_ptr<Model>>>>;
using row_source_ptr = std::shared_ptr<const row_source>;

template <class Model>
void add(choices<Model>& c, int weight, rc::Gen<command_ptr<Model>> g) {
  if (weight > 0) c.emplace_back(weight, std::move(g));
}

/// Appends to a live sequence: ordinary ones end inside a block or cross into the next and fit
/// while there is room (exhausting the pool is left to fill and overfill, so that properties steer
/// how often it happens); half the fills take the pool's last free slot, the others end a block
/// exactly, so that the next append opens a new one without exhausting the pool every time.
template <class Build>
void add_appends(choices<typename Build::model>& c, const paged_mix& mix, const typename Build::model& m,
                 const rc::Gen<pick_rule>& picks, row_source_ptr src) {
  const auto seed = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  auto appends = [&](int weight, const char* label, rc::Gen<rows_rule> rule) {
    add(c, weight,
        rc::gen::apply(
            [src, label](pick_rule p, rows_rule r, int ranks, std::uint64_t s) {
              return on_live<Build>(label, p, src,
                                    [=](const op_target& t, fit f) { return Build::append(t, r.rows(f), ranks, s); });
            },
            picks, std::move(rule), uniform_in(0, 4), seed));
  };
  const std::size_t most = m.config().block_size + 1;
  using end = rows_rule::end;
  appends(mix.append, "append",
          rc::gen::construct<rows_rule>(rc::gen::just(end::capped), uniform_in<std::size_t>(1, most + 1)));
  appends(mix.fill, "fill", rc::gen::element(rows_rule{end::pool, 0}, rows_rule{end::block, 0}));
  appends(mix.overfill, "overfill",
          rc::gen::construct<rows_rule>(rc::gen::just(end::pool), uniform_in<std::size_t>(1, 4)));
  appends(mix.empty, "empty append", rc::gen::just(rows_rule{end::capped, 0}));
  add(c, mix.bad_shape,
      rc::gen::apply(
          [src](pick_rule p, int variant, std::uint64_t s) {
            return on_live<Build>("bad shape", p, src,
                                  [=](const op_target& t, fit) { return Build::bad_shape(t, variant, s); });
          },
          picks, uniform_in(0, 6), seed));
}

/// Decodes, forks and releases of a live sequence. An exhausted pool refuses every append that
/// needs a block: release as often as append then, so that traces go on to reuse blocks instead of
/// collecting refusals.
template <class Build>
void add_sequence_ops(choices<typename Build::model>& c, const paged_mix& mix, const typename Build::model& m,
                      const rc::Gen<pick_rule>& picks, row_source_ptr src, bool can_decode) {
  if (can_decode)
    for (const auto& [weight, is_bad] : {std::pair{mix.decode, false}, {mix.bad_decode, true}}) {
      const bool bad = is_bad;  // a plain copy: clang 14 cannot capture structured bindings
      add(c, weight,
          rc::gen::apply(
              [src, bad](pick_rule p, int variant) {
                return on_live<Build>(bad ? "bad decode" : "decode", p, src,
                                      [=](const op_target& t, fit) { return Build::decode(t, bad, variant); });
              },
              picks, uniform_in(0, 2)));
    }
  const int release = m.available_blocks() == 0 && mix.release > 0 ? std::max(mix.release, mix.append) : mix.release;
  for (const auto& [weight, which] : {std::pair{mix.fork, op_kind::fork}, {release, op_kind::release}}) {
    const op_kind kind = which;  // a plain copy: clang 14 cannot capture structured bindings
    add(c, weight, rc::gen::map(picks, [src, kind](pick_rule p) {
          return on_live<Build>(to_string(kind), p, src,
                                [kind](const op_target& t, fit) { return sequence_op(kind, t.seq); });
        }));
  }
}

/// The first ops of a long case (shapes.h): a sequence, then one bulk append of most of the pool,
/// past 2^16 blocks in a huge pool whatever order the blocks are handed out in.
template <class Build>
std::optional<rc::Gen<command_ptr<typename Build::model>>> long_prologue(const typename Build::model& m,
                                                                         const gen_context& ctx) {
  using model = typename Build::model;
  const cache_config& c = m.config();
  if (!ctx.long_case || m.available_blocks() < c.capacity) return std::nullopt;
  if (m.live().empty()) return rc::gen::just(command<model>(sequence_op(op_kind::create, 0)));
  const std::size_t room = m.room(m.live().back());
  // A concrete op, not a deferred one: the prologue's ops stay what they were drawn as.
  return rc::gen::apply([t = op_target{ctx.src, 0, m.live().back()}](
                            std::size_t n, std::uint64_t seed) { return command<model>(Build::append(t, n, 0, seed)); },
                        long_fill_gen(room, room > huge_pool_blocks ? huge_pool_blocks + 1 : 0),
                        rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

/// One op drawn by weight from the property's mix.
template <class Build>
rc::Gen<command_ptr<typename Build::model>> op_gen(const paged_mix& mix, const typename Build::model& m,
                                                   const gen_context& ctx) {
  using model = typename Build::model;
  if (auto first = long_prologue<Build>(m, ctx)) return *first;
  const auto src = ctx.src;
  const std::size_t live = m.live().size();
  choices<model> c;
  // Nothing else can happen before the first sequence exists.
  add(c, live == 0 ? std::max(mix.create, 1) : mix.create,
      rc::gen::just(command<model>(sequence_op(op_kind::create, 0))));
  std::vector<op_kind> stale_kinds = {op_kind::append, op_kind::fork, op_kind::release};
  if (ctx.can_decode) stale_kinds.push_back(op_kind::decode);
  add(c, mix.stale,
      rc::gen::apply(
          [src](op_kind k, std::size_t which, std::uint64_t s) { return stale_command<Build>(k, which, src, s); },
          rc::gen::elementOf(stale_kinds), uniform_in<std::size_t>(0, m.handles() + 1),
          rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>())));
  if (live == 0) return weighted(std::move(c));
  const auto picks = pick_gen(live);
  add_appends<Build>(c, mix, m, picks, src);
  add_sequence_ops<Build>(c, mix, m, picks, src, ctx.can_decode);
  pool_prefiller prefill;  // the input class's query for every step, unless the kind's queries are its own
  if constexpr (requires(op o) { Build::prefill(o, src); })
    prefill = [](op o, const row_source_ptr& from) { return Build::prefill(std::move(o), from); };
  add_pool_speculation<model>(
      c, mix.speculation, ctx,
      [src](const model& pool, std::int64_t h, const op*, std::size_t keep, std::size_t n, std::uint64_t seed) {
        return Build::append(op_target{src, static_cast<std::int64_t>(pool.size(h) + keep), h}, n, 0, seed);
      },
      std::move(prefill));
  return weighted(std::move(c));
}

}  // namespace kvconform::kinds::pool_generation
