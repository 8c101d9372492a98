// The phases' op builders (docs/kinds/prefix.md "Phases"), templates over the pool model (prefix_model, radix_model):
// lookups, admits, chunks, retracts and aborts, and a scheduler step of several requests as one command.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "properties/kinds/prefix/prefix_generation.h"

namespace kvconform::kinds::prefix_generation {

template <class M>
pool_command<M> deferred_phase(const char* label, std::function<made_op(const M&)> f) {
  return std::make_shared<const deferred_command<M>>(label, std::move(f));
}

/// The live handles that wait (`waiting`) or run, oldest first.
template <class M>
std::vector<std::int64_t> handles_of(const M& m, bool waiting) {
  std::vector<std::int64_t> out;
  for (std::int64_t h : m.live())
    if (m.waiting(h) == waiting) out.push_back(h);
  return out;
}
inline std::optional<std::int64_t> newest(const std::vector<std::int64_t>& hs, std::size_t from_newest) {
  if (hs.empty()) return std::nullopt;
  return hs[hs.size() - 1 - from_newest % hs.size()];
}

/// A prompt: the first `keep` tokens of the `which`-th newest token sequence held so far, then `extra`.
template <class M>
std::vector<std::int64_t> prompt_of(const M& m, std::size_t which, std::size_t keep,
                                    const std::vector<std::int64_t>& extra) {
  std::vector<std::int64_t> t;
  if (const auto& history = m.history(); !history.empty()) {
    const auto& from = history[history.size() - 1 - which % history.size()].tokens;
    t.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(std::min(keep, from.size())));
  }
  t.insert(t.end(), extra.begin(), extra.end());
  return t;
}

/// A lookup of a prompt_of, or (`whole`) of that held sequence cut to whole pages with nothing after: a prompt the
/// tree may hold to its last token, which `hit_limit=all_but_last` stops a page short of.
template <class M>
pool_command<M> lookup_command(std::size_t which, std::size_t keep, std::vector<std::int64_t> extra, bool whole) {
  return deferred_phase<M>("lookup", [=](const M& m) -> made_op {
    const std::size_t bs = m.config().block_size;
    if (whole) return op{.kind = op_kind::lookup, .tokens = prompt_of(m, which, (keep + bs) / bs * bs, {})};
    return op{.kind = op_kind::lookup, .tokens = prompt_of(m, which, keep, extra)};
  });
}

/// An append of the next `n` tokens of running h's prompt (fewer where it or the pool ends), or of fresh tokens once
/// its tokens leave the prompt: a prefill chunk, or decode steps.
template <class M>
std::optional<op> chunk_op(const M& m, const row_source& src, std::int64_t h, std::size_t n, std::uint64_t bits) {
  if (!m.is_live(h) || m.waiting(h)) return std::nullopt;
  const auto &prompt = m.prompt(h), &held = m.tokens(h);
  std::vector<std::int64_t> next = tokens_of(bits, n);
  if (held.size() < prompt.size() && std::equal(held.begin(), held.end(), prompt.begin()))
    next.assign(
        prompt.begin() + std::ssize(held),
        prompt.begin() + std::ssize(held) + static_cast<std::ptrdiff_t>(std::min(n, prompt.size() - held.size())));
  next.resize(std::min(next.size(), m.room(h)));
  if (next.empty()) return std::nullopt;
  return token_append(src, h, held, next, 0);
}

/// How many rows an admit takes: `n` (a chunk), its whole prompt, or more than the pool holds (refused).
template <class M>
std::int64_t admit_count(const M& m, std::int64_t h, int rule, std::size_t n) {
  const auto& c = m.config();
  if (rule == 1) return static_cast<std::int64_t>(m.prompt(h).size());
  if (rule == 2) return static_cast<std::int64_t>(c.capacity * c.block_size + 1);
  return static_cast<std::int64_t>(n);
}

template <class M>
pool_command<M> admit_command(std::size_t from_newest, int rule, std::size_t n) {
  return deferred_phase<M>("admit", [=](const M& m) -> made_op {
    const auto h = newest(handles_of(m, true), from_newest);
    if (!h) return std::nullopt;
    return op{.kind = op_kind::admit, .seq = *h, .count = admit_count(m, *h, rule, n)};
  });
}

template <class M>
pool_command<M> chunk_command(std::size_t from_newest, std::size_t n, std::uint64_t bits, row_source_ptr src) {
  return deferred_phase<M>("chunk", [=](const M& m) -> made_op {
    const auto h = newest(handles_of(m, false), from_newest);
    return h ? chunk_op(m, *src, *h, n, bits) : std::nullopt;
  });
}

/// A retract of a running sequence or an abort of any live one; `stale`: of a sequence that cannot take it.
template <class M>
pool_command<M> end_command(op_kind kind, std::size_t from_newest, bool stale) {
  return deferred_phase<M>(stale ? "stale end" : to_string(kind), [=](const M& m) -> made_op {
    std::vector<std::int64_t> hs = kind == op_kind::retract ? handles_of(m, stale) : m.live();
    if (stale && kind == op_kind::abort) hs = {m.handles() + static_cast<std::int64_t>(from_newest % 2)};
    if (stale && kind == op_kind::admit) hs = handles_of(m, false);
    const auto h = newest(hs, from_newest);
    if (!h) return std::nullopt;
    return op{.kind = kind, .seq = *h, .count = 1};
  });
}

/// A scheduler step drawn once: how many requests, in which order their phases come, and what happens between
/// their chunks. Every choice shrinks towards two requests looked up, admitted and written in turn.
struct step_plan {
  std::size_t requests = 2;  ///< 2 or 3
  bool interleave = false;   ///< each lookup right before its admit (else every lookup first, then every admit)
  bool greedy = false;       ///< the first admit takes every page it can: the others' hits may be evicted
  bool same_prompt = false;  ///< every request the same prompt: duplicate inserts
  bool whole = false;        ///< the first request's prompt whole pages of a held sequence, nothing after
  int tail = 0;  ///< 1 the first retracted between its two chunks and admitted again; 2 the first aborted there;
                 ///< 3 another lookup aborted while it waits; 4 the held sequence the first prompt continues
                 ///< created whole at the end, through every split the lookups made
  std::size_t chunk = 1;   ///< rows per chunk
  std::size_t keep = 0;    ///< tokens of a held sequence each prompt starts with
  std::uint64_t bits = 0;  ///< the tokens after them
  /// The ops of the step left out (bit i: the i-th op made): none when drawn, as shrinking drops them one at a time
  /// (the later ops are made again from the model without them), so that a failure shrinks below whole steps.
  std::uint32_t dropped = 0;
};

/// No op dropped, shrinking to each op dropped besides those already (step_plan::dropped).
inline rc::Gen<std::uint32_t> dropped_ops() {
  return [](const rc::Random&, int) {
    return rc::shrinkable::shrinkRecur(std::uint32_t{0}, [](std::uint32_t m) {
      return rc::seq::map(rc::seq::filter(rc::seq::range(0, 32), [m](int i) { return (m >> i & 1u) == 0; }),
                          [m](int i) { return m | 1u << i; });
    });
  };
}

/// The ops of a step (a greedy first admit takes every page but what the others' chunks need, is written and
/// released, and the others still waiting are admitted again: their lookups' pages are evicted), each applied to a copy
/// of the model as it is made, so that the next names what it made.
template <class M>
struct step_builder {
  M m;
  row_source_ptr src;
  std::uint32_t dropped = 0;
  std::vector<op> ops;
  std::size_t made = 0;
  void run(op o) {
    if (made < 32 && (dropped >> made++ & 1u)) return;
    if (o.kind != op_kind::decode) m.apply(o);  // a decode changes nothing, and its problem costs as much as a case
    ops.push_back(std::move(o));
  }
  std::int64_t lookup(std::vector<std::int64_t> tokens) {
    run(op{.kind = op_kind::lookup, .tokens = std::move(tokens)});
    return m.handles() - 1;
  }
  void admit(std::int64_t h, std::size_t count) {
    run(op{.kind = op_kind::admit, .seq = h, .count = static_cast<std::int64_t>(count)});
  }
  void chunk(std::int64_t h, std::size_t n, std::uint64_t bits) {
    if (auto o = chunk_op(m, *src, h, n, bits)) run(std::move(*o));
  }
};

template <class M>
pool_command<M> scheduler_step(step_plan plan, bool can_decode, row_source_ptr src) {
  return deferred_ops<M>("scheduler step", [=](const M& state) -> std::optional<std::vector<op>> {
    step_builder<M> g{state, src, plan.dropped};
    const std::size_t bs = state.config().block_size, chunk = plan.chunk;
    std::vector<std::vector<std::int64_t>> prompts;
    // Each continues its own held sequence at its own place; in a greedy step the others continue the newest, whose
    // request finishes as the step begins, so that their hits are cached pages no table holds: the greedy admit
    // evicts them before theirs (hit lost before admit).
    const auto held_from = [&](std::size_t i) { return !plan.greedy ? i : i == 0 ? 1 : 0; };
    for (std::size_t i = 0; i < plan.requests; ++i)
      prompts.push_back(plan.same_prompt && i > 0 ? prompts[0]
                        : plan.whole && i == 0    ? prompt_of(state, 0, (plan.keep + bs) / bs * bs, {})
                                               : prompt_of(state, held_from(i), plan.keep + i * (plan.bits % (bs + 1)),
                                                           tokens_of(plan.bits >> (7 * i), 2 * chunk + 1)));
    if (plan.greedy && !state.history().empty())
      for (std::int64_t h : state.live())
        if (!state.waiting(h) && state.tokens(h) == state.history().back().tokens) {
          g.run(op{.kind = op_kind::release, .seq = h});
          break;
        }
    const std::size_t pages = (chunk + bs - 1) / bs;
    std::vector<std::int64_t> hs;
    if (!plan.interleave)
      for (const auto& p : prompts) hs.push_back(g.lookup(p));
    for (std::size_t i = 0; i < plan.requests; ++i) {
      if (plan.interleave) hs.push_back(g.lookup(prompts[i]));
      std::size_t count = i == 0 && (plan.tail == 1 || plan.tail == 2) ? 2 * chunk : chunk;
      if (i == 0 && plan.greedy) {  // all but its own hit's pages and a chunk's for each of the others
        const std::size_t keep = prompts[0].size() / bs + (plan.requests - 1) * pages;
        count = std::max(count, (g.m.available_blocks() - std::min(keep, g.m.available_blocks())) * bs);
      }
      g.admit(hs[i], count);
    }
    for (std::int64_t h : hs) g.chunk(h, chunk, plan.bits);
    if (plan.greedy && g.m.is_live(hs[0])) {
      g.run(op{.kind = op_kind::release, .seq = hs[0]});
      for (std::size_t i = 1; i < hs.size(); ++i)
        if (g.m.is_live(hs[i]) && g.m.waiting(hs[i])) g.admit(hs[i], chunk), g.chunk(hs[i], chunk, plan.bits);
    }
    if (plan.tail == 1 && g.m.is_live(hs[0]) && !g.m.waiting(hs[0])) {
      g.run(op{.kind = op_kind::retract, .seq = hs[0]});
      g.admit(hs[0], chunk);
      g.chunk(hs[0], chunk, plan.bits);
    }
    if (plan.tail == 2 && g.m.is_live(hs[0])) g.run(op{.kind = op_kind::abort, .seq = hs[0]});
    if (plan.tail == 3) g.run(op{.kind = op_kind::abort, .seq = g.lookup(prompts.back())});
    if (plan.tail == 4 && !state.history().empty()) {
      g.run(op{.kind = op_kind::create, .tokens = state.history().back().tokens});
      g.run(op{.kind = op_kind::release, .seq = g.m.handles() - 1});
    }
    for (std::int64_t h : hs)
      if (can_decode && g.m.is_live(h) && !g.m.waiting(h) && g.m.size(h) > 0)
        g.run(op{.kind = op_kind::decode, .q = tensor::vector(src->query()), .seq = h});
    return g.ops;
  });
}

template <class M>
void add_phase_ops(pool_choices<M>& c, const phase_mix& mix, const M& m, const gen_context& ctx) {
  const std::size_t live = m.live().size(), bs = m.config().block_size;
  const auto pick = rc::gen::oneOf(rc::gen::just<std::size_t>(0), uniform_in<std::size_t>(0, live + 3));
  const auto bits = rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  const auto chunk = uniform_in<std::size_t>(1, 2 * bs + 2);
  const auto src = ctx.src;
  add(c, mix.lookup, [=] {
    return rc::gen::apply(
        [](std::size_t which, std::size_t keep, std::uint64_t b, bool whole) {
          return lookup_command<M>(which, keep, tokens_of(b, b % (3 + 2 * (b % 5))), whole);
        },
        uniform_in<std::size_t>(0, 4), uniform_in<std::size_t>(0, 3 * bs + 2), bits, rc::gen::arbitrary<bool>());
  });
  add(c, live == 0 ? 0 : mix.admit, [=] {
    return rc::gen::apply(
        [](std::size_t p, int rule, std::size_t n) { return admit_command<M>(p, rule, n); }, pick,
        rc::gen::weightedOneOf<int>({{6, rc::gen::just(0)}, {3, rc::gen::just(1)}, {1, rc::gen::just(2)}}), chunk);
  });
  add(c, live == 0 ? 0 : mix.chunk, [=] {
    return rc::gen::apply(
        [src](std::size_t p, std::size_t n, std::uint64_t b) { return chunk_command<M>(p, n, b, src); }, pick, chunk,
        bits);
  });
  for (const auto& [weight, kind] : {std::pair{mix.retract, op_kind::retract}, {mix.abort, op_kind::abort}}) {
    const op_kind k = kind;
    add(c, live == 0 ? 0 : weight,
        [=] { return rc::gen::map(pick, [k](std::size_t p) { return end_command<M>(k, p, false); }); });
  }
  for (const op_kind k : {op_kind::admit, op_kind::retract, op_kind::abort})
    add(c, mix.stale, [=] { return rc::gen::map(pick, [k](std::size_t p) { return end_command<M>(k, p, true); }); });
  auto tails = [](unsigned mask) {  // the tails the mix allows, equally likely
    std::vector<int> allowed{0};
    for (int t = 1; t < 5; ++t)
      if (mask & (1u << t)) allowed.push_back(t);
    return rc::gen::elementOf(allowed);
  };
  add(c, mix.step, [=, decode = ctx.can_decode, mask = mix.tails] {
    const auto plan = rc::gen::construct<step_plan>(
        uniform_in<std::size_t>(2, 4), rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(),
        rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(), tails(mask), uniform_in<std::size_t>(1, bs + 2),
        uniform_in<std::size_t>(0, 3 * bs + 2), bits, dropped_ops());
    return rc::gen::map(plan, [decode, src](step_plan p) { return scheduler_step<M>(p, decode, src); });
  });
}

}  // namespace kvconform::kinds::prefix_generation
