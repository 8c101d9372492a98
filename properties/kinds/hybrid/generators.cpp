// RapidCheck stateful generation for the hybrid kind: layouts of several layer types, ops on live sequences.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/models/hybrid_model.h"
#include "properties/generate/commands.h"
#include "properties/generate/op_builders.h"
#include "properties/kinds/hybrid/parts.h"

namespace kvconform::kinds {

namespace {
using hybrid_command = command_ptr<hybrid_model>;
using choices = std::vector<std::pair<int, rc::Gen<hybrid_command>>>;
using source = std::shared_ptr<const row_source>;

void add(choices& c, int weight, rc::Gen<hybrid_command> g) {
  if (weight > 0) c.emplace_back(weight, std::move(g));
}

op sequence_op(op_kind kind, std::int64_t handle) {
  op o;
  o.kind = kind, o.seq = handle;
  return o;
}

/// The live sequence an op names when it runs: the `from_newest`-th newest, wrapping (shrinks to the newest).
std::optional<std::int64_t> resolve(const hybrid_model& m, std::size_t from_newest) {
  const auto live = m.live();
  if (live.empty()) return std::nullopt;
  return live[live.size() - 1 - from_newest % live.size()];
}
rc::Gen<std::size_t> pick_gen(std::size_t live) {
  return rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live));
}

/// How many steps an append has when it runs: `capped` n but no more than fit (at least one), `most` the most
/// that fit plus n (fill: n = 0; overfill: n >= 1).
struct steps_rule {
  bool most = false;
  std::size_t n = 0;
  std::size_t steps(const hybrid_model& m, std::int64_t h) const {
    const cache_config& c = m.config();
    if (!most) return n == 0 ? 0 : std::max<std::size_t>(m.room(h, n), 1);
    return std::max<std::size_t>(m.room(h, (c.capacity + 1) * c.block_size) + n, 1);
  }
};

hybrid_command on_live(std::string label, std::size_t pick,
                       std::function<std::optional<op>(const hybrid_model&, std::int64_t)> make) {
  return std::make_shared<const deferred_command<hybrid_model>>(
      std::move(label), [=](const hybrid_model& m) -> std::optional<op> {
        const auto h = resolve(m, pick);
        if (!h) return std::nullopt;  // shrinking removed every sequence before this op
        return make(m, *h);
      });
}

/// An append with shape error `variant`: one writing layer too many, a wrong key width, k and v differing in
/// steps, or 2-D arrays.
op bad_shape(op o, int variant, const cache_config& c) {
  const std::size_t w = o.k.shape[0], n = o.k.shape[1];
  switch (variant) {
    case 0:
      o.k.shape[0] = o.v.shape[0] = w + 1, o.k.data.resize((w + 1) * n * c.d_k), o.v.data.resize((w + 1) * n * c.d_v);
      break;
    case 1: o.k.shape = {w, n * c.d_k, 1}; break;
    case 2: o.v.shape[1] = n - 1, o.v.data.resize(w * (n - 1) * c.d_v); break;
    default: o.k.shape = {w * n, c.d_k}, o.v.shape = {w * n, c.d_v}; break;
  }
  return o;
}

void add_appends(choices& c, const hybrid_mix& mix, const rc::Gen<std::size_t>& picks, source src) {
  const auto seed = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  auto appends = [&](int weight, const char* label, rc::Gen<steps_rule> rule) {
    add(c, weight,
        rc::gen::apply(
            [src, label](std::size_t p, steps_rule r, std::uint64_t s) {
              return on_live(label, p, [=](const hybrid_model& m, std::int64_t h) -> std::optional<op> {
                return hybrid_append_op(*src, m.config(), h, static_cast<std::int64_t>(m.size(h)), r.steps(m, h), s);
              });
            },
            picks, std::move(rule), seed));
  };
  appends(mix.append, "append", rc::gen::construct<steps_rule>(rc::gen::just(false), uniform_in<std::size_t>(1, 6)));
  appends(mix.fill, "fill", rc::gen::just(steps_rule{true, 0}));
  appends(mix.overfill, "overfill", rc::gen::construct<steps_rule>(rc::gen::just(true), uniform_in<std::size_t>(1, 4)));
  appends(mix.empty, "empty append", rc::gen::just(steps_rule{false, 0}));
  add(c, mix.bad_shape,
      rc::gen::apply(
          [src](std::size_t p, int variant, std::uint64_t s) {
            return on_live("bad shape", p, [=](const hybrid_model& m, std::int64_t h) -> std::optional<op> {
              return bad_shape(hybrid_append_op(*src, m.config(), h, static_cast<std::int64_t>(m.size(h)), 2, s),
                               variant, m.config());
            });
          },
          picks, uniform_in(0, 4), seed));
}

/// A prefill of about `want` steps (as many as fit, at least one) onto the live sequence `pick` names: the
/// append's rows, and the class's query for every layer and step.
hybrid_command prefill_command(std::size_t pick, std::size_t want, source src, std::uint64_t seed) {
  return on_live("prefill", pick, [=](const hybrid_model& m, std::int64_t h) -> std::optional<op> {
    const std::size_t n = std::max<std::size_t>(m.room(h, want, true), 1);
    op o = hybrid_append_op(*src, m.config(), h, static_cast<std::int64_t>(m.size(h)), n, seed);
    o.kind = op_kind::prefill;
    std::vector<double> q;
    for (std::size_t r = 0; r < m.layers() * n; ++r) q.insert(q.end(), src->query().begin(), src->query().end());
    o.q = tensor{{m.layers(), n, src->d_k()}, std::move(q)};
    attach_sinks(o, *src, static_cast<std::int64_t>(m.size(h)), m.layers());
    return o;
  });
}

/// Decodes of any layer (a bad one: a layer past the last, or q of rank 2 or the wrong width), forks, releases.
void add_sequence_ops(choices& c, const hybrid_mix& mix, const hybrid_model& m, const rc::Gen<std::size_t>& picks,
                      source src, bool can_decode) {
  const std::size_t layers = m.layers();
  if (can_decode)
    for (const bool bad : {false, true})
      add(c, bad ? mix.bad_decode : mix.decode,
          rc::gen::apply(
              [src, bad, layers](std::size_t p, std::size_t l, int v) {
                return on_live(bad ? "bad decode" : "decode", p,
                               [=](const hybrid_model& m, std::int64_t h) -> std::optional<op> {
                                 op o = sequence_op(op_kind::decode, h);
                                 o.layer = static_cast<std::int64_t>(bad && v == 0 ? layers : l);
                                 o.q = tensor::vector(src->query());
                                 attach_sinks(o, *src, static_cast<std::int64_t>(m.size(h) + l));
                                 if (bad && v == 1) o.q.shape = {1, src->d_k()};
                                 if (bad && v == 2) o.q.data.push_back(0.5), o.q.shape = {src->d_k() + 1};
                                 return o;
                               });
              },
              picks, uniform_in<std::size_t>(0, layers), uniform_in(0, 3)));
  const int release = m.available_blocks() == 0 && mix.release > 0 ? std::max(mix.release, mix.append) : mix.release;
  for (const auto& [weight, which] : {std::pair{mix.fork, op_kind::fork}, {release, op_kind::release}}) {
    const op_kind kind = which;
    add(c, weight, rc::gen::map(picks, [kind](std::size_t p) {
          return on_live(to_string(kind), p, [kind](const hybrid_model&, std::int64_t h) -> std::optional<op> {
            return sequence_op(kind, h);
          });
        }));
  }
}

/// slide_away (hybrid_mix) on the live sequence `pick` names, with the parent's appends drawn from `seed`.
hybrid_command slide_away(std::size_t pick, source src, std::uint64_t seed) {
  return deferred_ops<hybrid_model>("slide away", [=](const hybrid_model& m) -> std::optional<std::vector<op>> {
    const cache_config& c = m.config();
    if (c.window == 0) return std::nullopt;
    hybrid_model after = m;
    std::vector<op> ops;
    auto run = [&](op o) { after.apply(o), ops.push_back(std::move(o)); };
    if (m.live().empty()) run(hybrid_create_op(*src, c, seed + 3));  // a whole story from the first op on
    const auto h = resolve(after, pick);
    if (!h) return std::nullopt;
    // Forked at a block's end past a window, the fork's full blocks stay the parent's too, and it holds sliding
    // blocks of its own: its release frees sliding blocks only.
    const std::size_t bs = c.block_size, size = after.size(*h), to = (std::max(size, c.window) + bs - 1) / bs * bs;
    if (to > size) run(hybrid_append_op(*src, c, *h, static_cast<std::int64_t>(size), to - size, seed));
    const std::int64_t fork = after.handles();
    run(sequence_op(op_kind::fork, *h));
    // The most steps that fit: the pool runs dry, and the release gives back only blocks the window left.
    const std::size_t n = std::max<std::size_t>(after.room(*h, (c.capacity + 1) * c.block_size), 1);
    run(hybrid_append_op(*src, c, *h, static_cast<std::int64_t>(after.size(*h)), n, seed + 1));
    run(sequence_op(op_kind::release, fork));
    // A block's worth more: the full group takes a block the window freed.
    const std::size_t more = std::max<std::size_t>(after.room(*h, c.block_size), 1);
    run(hybrid_append_op(*src, c, *h, static_cast<std::int64_t>(after.size(*h)), more, seed + 2));
    return ops;
  });
}

/// behind_window (hybrid_mix) on the live sequence `pick` names, with its append drawn from `seed`.
hybrid_command behind_window(std::size_t pick, source src, std::uint64_t seed) {
  return deferred_ops<hybrid_model>("behind the window", [=](const hybrid_model& m) -> std::optional<std::vector<op>> {
    const cache_config& c = m.config();
    if (!c.prefix_caching) return std::nullopt;
    hybrid_model after = m;
    std::vector<op> ops;
    auto run = [&](op o) { after.apply(o), ops.push_back(std::move(o)); };
    if (m.live().empty()) run(hybrid_create_op(*src, c, seed + 3));
    const auto h = resolve(after, pick);
    if (!h) return std::nullopt;
    const std::size_t bs = c.block_size, want = c.window + 3 * bs;
    const std::size_t n = std::max<std::size_t>(std::min(want, after.room(*h, want)), 1);
    run(hybrid_append_op(*src, c, *h, static_cast<std::int64_t>(after.size(*h)), n, seed));
    auto prompt = after.tokens(*h);
    prompt.resize(prompt.size() - std::min(prompt.size(), bs * (1 + seed % 2)));
    run(hybrid_create_op(*src, c, seed + 5, prompt));
    return ops;
  });
}

/// Ops naming a handle that names no sequence: released, a refused create's or fork's, or the next one.
hybrid_command stale_command(op_kind kind, std::size_t which, source src, std::uint64_t seed) {
  return std::make_shared<const deferred_command<hybrid_model>>(
      std::string("stale ") + to_string(kind), [=](const hybrid_model& m) -> std::optional<op> {
        std::vector<std::int64_t> stale;
        const auto live = m.live();
        for (std::int64_t h = 0; h <= m.handles(); ++h)
          if (!std::binary_search(live.begin(), live.end(), h)) stale.push_back(h);
        const std::int64_t h = stale[which % stale.size()];
        if (kind == op_kind::append) return hybrid_append_op(*src, m.config(), h, 0, 1, seed);
        op o = sequence_op(kind, h);
        if (kind == op_kind::decode) o.q = tensor::vector(src->query());
        attach_sinks(o, *src, 0);
        return o;
      });
}

/// The first ops of a long case (shapes.h): a sequence, then one bulk append of all the room the pool has.
std::optional<rc::Gen<hybrid_command>> long_prologue(const hybrid_model& m, const gen_context& ctx) {
  const auto live = m.live();
  if (!ctx.long_case || live.size() > 1 || (live.size() == 1 && m.size(live[0]) > 0)) return std::nullopt;
  const cache_config& c = m.config();
  const auto seed = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  // Concrete ops, not deferred ones: the prologue's ops stay what they were drawn as.
  if (live.empty())
    return rc::gen::map(
        seed, [src = ctx.src, c](std::uint64_t s) { return command<hybrid_model>(hybrid_create_op(*src, c, s)); });
  const std::size_t room = std::max<std::size_t>(m.room(live[0], c.capacity * c.block_size), 1);
  return rc::gen::map(seed, [src = ctx.src, c, h = live[0], room](std::uint64_t s) {
    return command<hybrid_model>(hybrid_append_op(*src, c, h, 0, room, s));
  });
}

/// A create's prompt: with prefix caching, most often a live sequence's tokens, cut at a block edge or within a
/// block, then a few more; else tokens drawn anew.
std::vector<std::int64_t> prompt_for(const hybrid_model& m, std::uint64_t seed) {
  const std::size_t bs = m.config().block_size;
  const auto live = m.live();
  if (!m.config().prefix_caching || live.empty() || seed % 4 == 0)
    return hybrid_tokens(seed, (seed >> 8) % (3 * bs + 1));
  auto t = m.tokens(live[(seed >> 2) % live.size()]);
  t.resize(t.size() - std::min(t.size(), static_cast<std::size_t>((seed >> 12) % (bs + 1))));
  const auto more = hybrid_tokens(seed >> 1, (seed >> 20) % 3);
  t.insert(t.end(), more.begin(), more.end());
  return t;
}

rc::Gen<hybrid_command> op_gen(const hybrid_mix& mix, const hybrid_model& m, const gen_context& ctx) {
  if (auto first = long_prologue(m, ctx)) return *first;
  const auto src = ctx.src;
  const std::size_t live = m.live().size();
  choices c;
  add(c, live == 0 ? std::max(mix.create, 1) : mix.create,
      rc::gen::map(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()), [src](std::uint64_t s) -> hybrid_command {
        return std::make_shared<const deferred_command<hybrid_model>>(
            "create", [=](const hybrid_model& m) -> std::optional<op> {
              return hybrid_create_op(*src, m.config(), s, prompt_for(m, s));
            });
      }));
  std::vector<op_kind> stale_kinds = {op_kind::append, op_kind::fork, op_kind::release};
  if (ctx.can_decode) stale_kinds.push_back(op_kind::decode);
  add(c, mix.stale,
      rc::gen::apply([src](op_kind k, std::size_t which, std::uint64_t s) { return stale_command(k, which, src, s); },
                     rc::gen::elementOf(stale_kinds), uniform_in<std::size_t>(0, m.handles() + 1),
                     rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>())));
  const auto picks = pick_gen(std::max<std::size_t>(live, 1));
  for (const auto& [weight, story] : {std::pair{mix.slide_away, &slide_away}, {mix.behind_window, &behind_window}})
    add(c, ctx.long_case ? 0 : weight,  // a long case is about scale: its ops stay single
        rc::gen::apply([src, f = story](std::size_t p, std::uint64_t s) { return f(p, src, s); }, picks,
                       rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>())));
  if (live == 0) return weighted(std::move(c));
  add_appends(c, mix, picks, src);
  if (ctx.caps.has(capability::prefill)) {
    const std::size_t longest = 2 * m.config().window + m.config().block_size + 1;
    add(c, mix.prefill,
        rc::gen::apply(
            [src](std::size_t p, std::size_t want, std::uint64_t s) { return prefill_command(p, want, src, s); }, picks,
            uniform_in<std::size_t>(1, longest + 1), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>())));
  }
  add_sequence_ops(c, mix, m, picks, src, ctx.can_decode);
  return weighted(std::move(c));
}

/// A layout drawn for `needs`: up to 4 decoder layers (6 deep), a window of up to 8 rows (24 deep) over blocks of
/// up to 4 rows (16 deep), sinks, a global layer every 2 or 3, shared layers and up to 6 encoder rows.
rc::Gen<cache_config> layout_gen(unsigned needs, bool deep) {
  const std::size_t most_layers = deep ? 6 : 4, most_window = deep ? 24 : 8;
  return rc::gen::apply(
      [needs](std::size_t blocks, std::size_t bs, std::size_t dk, std::size_t dv, std::size_t layers,
              std::size_t window, std::size_t keep, std::size_t every, std::size_t shared, std::size_t cross) {
        cache_config c{cache_kind::hybrid, needs & need_tight ? 3 + blocks % 6 : blocks, dk, dv};
        c.block_size = needs & need_tight ? std::max<std::size_t>(bs, 2) : bs;
        c.prefix_caching = needs & need_prefix;
        c.layers = std::max<std::size_t>(layers, (needs & need_mixed ? 2 : 1) + (needs & need_shared ? 1 : 0));
        c.window = needs & (need_window | need_mixed) ? std::max<std::size_t>(window, 1) : window;
        c.keep = c.window > 0 ? keep % c.window : 0;
        c.global_every = c.window > 0 ? every : 0;
        if (needs & need_mixed)
          c.global_every = std::clamp<std::size_t>(c.global_every, 2, c.layers - (needs & need_shared ? 1 : 0));
        c.shared = std::min(needs & need_shared ? std::max<std::size_t>(shared, 1) : shared, c.layers - 1);
        if (needs & need_mixed) c.shared = std::min(c.shared, c.layers - c.global_every);
        c.cross = needs & need_cross ? std::max<std::size_t>(cross, 1) : needs & need_tight ? 0 : cross;
        // Groups of different widths: a block that moves between them is laid out anew.
        if ((needs & need_mixed) && (c.layers - c.shared) % 2 == 0 && c.global_every == 2) ++c.layers;
        return c;
      },
      uniform_in<std::size_t>(2, deep ? 65 : 17), uniform_in<std::size_t>(1, deep ? 17 : 5), width_gen(deep),
      width_gen(deep), uniform_in<std::size_t>(1, most_layers + 1),
      rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(1, most_window + 1),
                     uniform_in<std::size_t>(1, most_window + 1)),
      uniform_in<std::size_t>(0, 3), uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3),
      rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(1, 7)));
}

/// A long case's layout (shapes.h): long_rows_min to long_rows_max rows of pool in blocks of up to 16, narrow rows,
/// up to 3 decoder layers, a window of up to a quarter of the rows.
rc::Gen<cache_config> long_layout_gen() {
  return rc::gen::apply(
      [](std::size_t rows, std::size_t bs, std::size_t dk, std::size_t dv, std::size_t layers, std::size_t window,
         std::size_t shared, std::size_t cross) {
        cache_config c{cache_kind::hybrid, std::max<std::size_t>(rows / bs, 2), dk, dv};
        c.block_size = bs, c.layers = layers, c.window = window % (rows / 4);
        c.keep = c.window > 2 ? 2 : 0, c.global_every = c.window > 0 ? 2 : 0;
        c.shared = shared % layers, c.cross = cross;
        return c;
      },
      long_rows_gen(), uniform_in<std::size_t>(1, 17), long_width_gen(), long_width_gen(),
      uniform_in<std::size_t>(1, 4), uniform_in<std::size_t>(0, long_rows_max), uniform_in<std::size_t>(0, 3),
      uniform_in<std::size_t>(0, 9));
}

}  // namespace

case_generator hybrid_cases(hybrid_mix mix) {
  return [mix](const property& p, const implementation& impl, const run_options& o) {
    // Sinks are a capability (docs/kinds/hybrid.md): a cache without them is given none.
    const auto sinks = [has = impl.capabilities.has(capability::sinks)](rc::Gen<cache_config> g) {
      return rc::gen::map(std::move(g), [has](cache_config c) {
        if (!has) c.keep = 0;
        return c;
      });
    };
    return run_commands<hybrid_model>(
        p, impl, o, {sinks(layout_gen(mix.needs, o.deep)), sinks(long_layout_gen())},
        [](const cache_config& c, const numeric_profile& prof, const policy_set& pol) {
          return hybrid_model(c, prof, pol);
        },
        [mix](const hybrid_model& m, const gen_context& ctx) { return op_gen(mix, m, ctx); }, p.long_traces ? 4 : 2);
  };
}

}  // namespace kvconform::kinds
