// RapidCheck stateful generation for the paged kind: ops on sequences drawn from the model's live set.
#include <algorithm>
#include <iterator>
#include <memory>

#include "oracle/paged_model.h"
#include "properties/rc_runner.h"

namespace kvconform {

namespace {
using paged_command = command_ptr<paged_model>;

/// A live sequence as the generators see it, copied: RapidCheck keeps generators alive while shrinking.
struct live_sequence {
  std::int64_t handle = 0;
  std::size_t size = 0;
  std::size_t room = 0;  ///< the exact fill: the most rows an append takes without preempting
  bool copies = false;   ///< its partly filled last block is shared: the next append copies it
};

op sequence_op(op_kind kind, std::int64_t handle) {
  op o;
  o.kind = kind;
  o.seq = handle;
  return o;
}

/// A live sequence: the newest (so forks of forks come often), one whose next append copies a
/// shared block (when any), or any; shrinks towards the newest, then the oldest.
rc::Gen<live_sequence> pick(const std::vector<live_sequence>& live) {
  std::vector<live_sequence> copying;
  std::copy_if(live.begin(), live.end(), std::back_inserter(copying), [](const live_sequence& s) { return s.copies; });
  if (copying.empty()) return rc::gen::oneOf(rc::gen::just(live.back()), rc::gen::elementOf(live));
  return rc::gen::oneOf(rc::gen::just(live.back()), rc::gen::elementOf(copying), rc::gen::elementOf(live));
}

/// Ops naming a handle that names no sequence: released, preempted, a refused fork's, or not issued yet.
rc::Gen<paged_command> stale_gen(const std::vector<std::int64_t>& stale, std::shared_ptr<const row_source> src, bool can_decode) {
  return rc::gen::apply(
      [src](std::int64_t h, int kind, std::uint64_t seed) {
        const op_target t{src, 0, h};
        switch (kind) {
          case 0: return command<paged_model>(append_op(t, 1, false, seed));
          case 1: return command<paged_model>(sequence_op(op_kind::fork, h));
          case 2: return command<paged_model>(sequence_op(op_kind::release, h));
          default: return command<paged_model>(decode_op(t, false, 0));
        }
      },
      rc::gen::elementOf(stale), uniform_in(0, can_decode ? 4 : 3), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

/// One op drawn by weight from the property's mix, on sequences drawn from the model's live set.
rc::Gen<paged_command> op_gen(const paged_model& m, const gen_context& ctx) {
  const op_mix& mix = ctx.mix;
  std::vector<live_sequence> live;
  std::vector<std::int64_t> stale;
  for (std::int64_t h = 0; h <= m.handles(); ++h) stale.push_back(h);
  for (std::int64_t h : m.live()) live.push_back({h, m.size(h), m.room(h), m.copies_on_append(h)}), std::erase(stale, h);

  std::vector<std::pair<int, rc::Gen<paged_command>>> choices;
  auto add = [&](int weight, rc::Gen<paged_command> g) {
    if (weight > 0) choices.emplace_back(weight, std::move(g));
  };
  // Nothing else can happen before the first sequence exists.
  add(live.empty() ? std::max(mix.create, 1) : mix.create, rc::gen::just(command<paged_model>(sequence_op(op_kind::create, 0))));
  add(mix.stale, stale_gen(stale, ctx.src, ctx.can_decode));
  if (live.empty()) return weighted(std::move(choices));

  const auto src = ctx.src;
  auto target = [src](const live_sequence& s) { return op_target{src, static_cast<std::int64_t>(s.size), s.handle}; };
  auto on_live = [&](int weight, auto make) {
    add(weight, rc::gen::mapcat(pick(live), [target, make](const live_sequence& s) { return make(target(s), s); }));
  };
  // Ordinary appends end inside a block or cross into the next, and fit while there is room:
  // exhausting the pool is left to fill and overfill, so that properties steer how often it happens.
  const std::size_t most = m.config().block_size + 1;
  on_live(mix.append, [most](const op_target& t, const live_sequence& s) {
    return append_gen<paged_model>(t, uniform_in<std::size_t>(1, std::clamp<std::size_t>(s.room, 1, most) + 1));
  });
  on_live(mix.fill, [](const op_target& t, const live_sequence& s) { return append_gen<paged_model>(t, rc::gen::just(std::max<std::size_t>(s.room, 1))); });
  on_live(mix.overfill, [](const op_target& t, const live_sequence& s) {
    return append_gen<paged_model>(t, rc::gen::map(uniform_in<std::size_t>(1, 4), [room = s.room](std::size_t extra) { return room + extra; }));
  });
  on_live(mix.empty, [](const op_target& t, const live_sequence&) { return append_gen<paged_model>(t, rc::gen::just<std::size_t>(0)); });
  on_live(mix.bad_shape, [](const op_target& t, const live_sequence&) { return bad_shape_gen<paged_model>(t); });
  if (ctx.can_decode) {
    on_live(mix.decode, [](const op_target& t, const live_sequence&) { return decode_gen<paged_model>(t, false); });
    on_live(mix.bad_decode, [](const op_target& t, const live_sequence&) { return decode_gen<paged_model>(t, true); });
  }
  // An exhausted pool refuses every append that needs a block: release as often as append then,
  // so that traces go on to reuse blocks instead of collecting refusals.
  const int release = m.free_blocks() == 0 && mix.release > 0 ? std::max(mix.release, mix.append) : mix.release;
  for (auto [weight, kind] : {std::pair{mix.fork, op_kind::fork}, {release, op_kind::release}})
    on_live(weight, [kind](const op_target& t, const live_sequence&) { return rc::gen::just(command<paged_model>(sequence_op(kind, t.seq))); });
  return weighted(std::move(choices));
}

rc::Gen<cache_config> config_gen(bool preempt, bool long_traces, bool deep) {
  const std::size_t max_blocks = deep ? 64 : (long_traces ? 32 : 16), max_block_size = deep ? 16 : 4;
  return rc::gen::apply(
      [preempt](std::size_t blocks, std::size_t block_size, std::size_t dk, std::size_t dv) {
        cache_config c{cache_kind::paged, blocks, dk, dv};
        c.block_size = block_size, c.preempt = preempt;
        return c;
      },
      uniform_in<std::size_t>(1, max_blocks + 1), uniform_in<std::size_t>(1, max_block_size + 1), width_gen(deep), width_gen(deep));
}

}  // namespace

property_run run_paged_property(const property& p, const implementation& impl, const run_options& o) {
  // A property that needs the preempt policy runs every trace with it; the others refuse when the pool is exhausted.
  const bool preempt = std::find(p.needs.begin(), p.needs.end(), "preempt") != p.needs.end();
  // Several sequences need longer traces than one: to exhaust the pool, fork chains, release and reuse.
  const double trace_scale = p.long_traces ? 4 : 2;
  return run_commands<paged_model>(
      p, impl, o, config_gen(preempt, p.long_traces, o.deep),
      [](const cache_config& c, const numeric_profile& prof) { return paged_model(c, prof); }, op_gen, trace_scale);
}

}  // namespace kvconform
