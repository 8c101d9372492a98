// The targeted numeric search's rounds: a pool of the worst decodes, moves on them, a failing trace kept and shrunk.
#include "properties/generate/numeric_search.h"

#include <algorithm>
#include <iterator>

#include "properties/executor/case_count.h"
#include "properties/executor/stop.h"

namespace kvconform {

namespace {
constexpr std::size_t pool_size = 4;
/// Distinguishes the search's random engine from anything else seeded with the property's seed.
constexpr std::uint64_t search_salt = 0x7461726765746564ull;

/// The first round: the moves that expose whole classes of kernel bugs (a tile's max, tiny weights,
/// coherent sums, score accumulation), each in its most revealing regime.
constexpr search::move schedule[] = {search::move::max_past_tile, search::move::tiny_tail, search::move::repeated_rows,
                                     search::move::cancellation};

/// Later moves by weight: mostly those that raised err/bound most often on the references (repeated
/// rows, tails, rerolls), sometimes a jump to another regime.
search::move random_move(search::random_engine& rng) {
  static constexpr std::pair<search::move, int> weights[] = {
      {search::move::repeated_rows, 3}, {search::move::tiny_tail, 3},    {search::move::near_tie, 2},
      {search::move::reroll, 3},        {search::move::magnitude, 2},    {search::move::values, 1},
      {search::move::cancellation, 1},  {search::move::max_past_tile, 1}};
  int total = 0;
  for (const auto& [m, w] : weights) total += w;
  int r = static_cast<int>(rng() % static_cast<unsigned>(total));
  for (const auto& [m, w] : weights)
    if ((r -= w) < 0) return m;
  return search::move::reroll;
}

/// The first round: the schedule, or half the budget if that is less.
int first_budget(const run_options& o) { return std::min(static_cast<int>(std::size(schedule)), (o.search + 1) / 2); }
}  // namespace

numeric_search::numeric_search(const property& p, const implementation& impl, const run_options& o)
    : p_(p), impl_(impl), o_(o), rng_(property_seed(o.seed, p.name) ^ search_salt) {}

void numeric_search::passed(const cache_config& config, const std::vector<op>& ops, const decode_stats& stats) {
  if (done()) return;
  ++passed_;
  const bool worse = pool_.size() < pool_size || stats.worst_ratio > pool_.back().ratio;
  if (stats.numeric > 0 && stats.worst_op < ops.size() && worse) {
    search::candidate c;
    c.t = search::focus(config, ops, stats.worst_op);
    c.t.policies = impl_.policies;
    if (search::examine(c, impl_.profile)) keep(std::move(c), stats.worst_ratio);
  }
  if (!first_done_ && passed_ >= std::min(probe_after, o_.cases)) round(first_budget(o_), true);
}

void numeric_search::finish() {
  if (!first_done_) round(first_budget(o_), true);
  round(o_.search - first_budget(o_), false);
}

void numeric_search::round(int budget, bool first) {
  first_done_ = first_done_ || first;
  // A trace that fails counts counted() + 1 cases: past the run's case_limit it is not run.
  const auto limited = [&] { return o_.case_limit > 0 && counted() >= o_.case_limit; };
  for (int i = 0; i < budget && !done() && !pool_.empty() && !limited(); ++i) {
    const bool scheduled = first && static_cast<std::size_t>(i) < std::size(schedule);
    const entry& parent = scheduled || (rng_() & 1) ? pool_.front() : pool_[rng_() % pool_.size()];
    search::candidate c = parent.c;
    if (!search::apply(scheduled ? schedule[i] : random_move(rng_), c, rng_, impl_.profile, scheduled) ||
        !within_limits(c.t.config, impl_)) {
      c = parent.c;  // the move does not apply to this trace: a reroll instead, so that the case is a new trace
      if (!search::apply(search::move::reroll, c, rng_, impl_.profile, false)) continue;
    }
    evaluate(std::move(c));
  }
}

void numeric_search::evaluate(search::candidate c) {
  ++cases_;
  const verdict v = run_trace(c.t, impl_);
  count_case();
  stats_.merge(v.stats);
  if (!v.fail) {
    if (v.stats.numeric > 0) keep(std::move(c), v.stats.worst_ratio);
    return;
  }
  if (stopped_early(*v.fail)) {
    stopped_ = true;
    return;
  }
  found_ = true, found_after_ = passed_, fail_ = v.fail;
  counterexample_ = std::move(c.t);
  counterexample_->implementation = impl_.name, counterexample_->property = p_.name;
  if (o_.shrink) shrink();
  counterexample_->note = fail_->message;
}

void numeric_search::keep(search::candidate c, double ratio) {
  // The same ratio is almost surely the same decode again (a move that changed nothing it reads).
  for (const entry& e : pool_)
    if (e.ratio == ratio) return;
  const auto at = std::find_if(pool_.begin(), pool_.end(), [&](const entry& e) { return ratio > e.ratio; });
  pool_.insert(at, entry{std::move(c), ratio});
  if (pool_.size() > pool_size) pool_.pop_back();
}

void numeric_search::shrink() {
  trace& t = *counterexample_;
  t.ops.resize(fail_->op_index + 1);
  // Drops ops, last first, while the trace still fails the same check (a removal may renumber
  // sequences or change what fits; the executor judges the smaller trace from scratch).
  for (std::size_t i = t.ops.size() - 1; i-- > 0;) {
    if (i + 1 >= t.ops.size()) continue;  // an earlier removal cut the trace short of i
    trace smaller = t;
    smaller.ops.erase(smaller.ops.begin() + static_cast<std::ptrdiff_t>(i));
    const verdict v = run_trace(smaller, impl_);
    if (v.fail && stopped_early(*v.fail)) return;
    if (!v.fail || v.fail->check != fail_->check) continue;
    smaller.ops.resize(v.fail->op_index + 1);
    t = std::move(smaller), fail_ = v.fail;
  }
}

void numeric_search::report(property_run& out) const {
  out.search_cases = cases_, out.search_stats = stats_;
  if (!found_) {
    if (out.fail) out.cases += cases_;  // a random case failed after the first round: its traces came first
    return;
  }
  out.cases = found_after_ + cases_;
  out.fail = fail_, out.counterexample = counterexample_, out.searched = true;
}

}  // namespace kvconform
