// One executor for every source of traces: generated, fuzzed, loaded from JSON, or a port.
#include "properties/executor/executor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <sstream>
#include <tuple>

#include "properties/executor/decode_check.h"
#include "properties/executor/kind_table.h"
#include "properties/executor/stop.h"

namespace kvconform {

namespace {
// Guard cells around every input (ggml-style sentinels) and the poison written into inputs
// once a call returns; both are NaNs with payloads no arithmetic produces.
constexpr std::uint64_t sentinel_bits = 0x7ff46b76636f6e66ull;
constexpr std::uint64_t poison_bits = 0x7ff8dead00c0ffeeull;
constexpr std::size_t guard = 8;

/// A caller's array as the implementation sees it: a copy with sentinels on both sides.
struct guarded {
  std::vector<double> buf;
  const tensor& src;
  explicit guarded(const tensor& t) : buf(t.data.size() + 2 * guard, std::bit_cast<double>(sentinel_bits)), src(t) {
    std::copy(t.data.begin(), t.data.end(), buf.begin() + guard);
  }
  array_view view() const { return src.view_of(buf.data() + guard); }
  bool unchanged() const {
    return src.data.empty() || std::memcmp(buf.data() + guard, src.data.data(), src.data.size() * sizeof(double)) == 0;
  }
  bool sentinels_intact() const {
    for (std::size_t i = 0; i < guard; ++i)
      if (std::bit_cast<std::uint64_t>(buf[i]) != sentinel_bits ||
          std::bit_cast<std::uint64_t>(buf[buf.size() - 1 - i]) != sentinel_bits)
        return false;
    return true;
  }
  void poison() { std::fill(buf.begin() + guard, buf.end() - guard, std::bit_cast<double>(poison_bits)); }
};

bool pinned_equal(double x, double want, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::llround(x * scale) == std::llround(want * scale);
}

std::string handles_text(const std::vector<std::int64_t>& h) {
  std::string s = "[";
  for (std::size_t i = 0; i < h.size(); ++i) s += (i ? ", " : "") + std::to_string(h[i]);
  return s + "]";
}

std::string outcome_text(bool accepted, unsigned reasons) {
  return accepted ? "accepted" : "refused (" + describe_refusals(reasons) + ")";
}
}  // namespace

void decode_stats::merge(const decode_stats& o) {
  decodes += o.decodes, numeric += o.numeric, unjudged += o.unjudged;
  if (o.worst_ratio > worst_ratio) worst_op = o.worst_op;
  worst_ratio = std::max(worst_ratio, o.worst_ratio);
  end_to_end += o.end_to_end, worst_end_to_end = std::max(worst_end_to_end, o.worst_end_to_end);
  ratios.merge(o.ratios);
}

session::session(const cache_config& c, const implementation& impl)
    : impl_(impl),
      model_(make_model(c, impl.profile, impl.policies)),
      formats_(impl.profile, c),
      events_(config_events(c)),
      refused_(refused_event(c.kind)),
      infinity_(infinity_event(c.kind)) {
  if (const auto probe = kind_of(c.kind).coverage.probe) probe_ = probe(c);
  try {
    subject_ = impl.make(c);
  } catch (const subject_failure& e) {
    failure_ = failure{0, "create", e.check, e.what()};
    if (stopped_early(*failure_)) note_stop_seen();
  } catch (const std::exception& e) {
    failure_ = failure{0, "create", "exception", std::string("creating the cache threw: ") + e.what()};
  }
}
session::~session() = default;

bool session::fail(std::string check, std::string message) {
  failure f;
  f.op_index = ops_.size() - 1;
  f.op_name = to_string(ops_.back().kind);
  f.check = std::move(check);
  // A cache held to declared policies is told which: what it was held to is part of the finding (docs/design.md §2.4).
  f.message =
      impl_.policies.empty() ? std::move(message) : with_policies(spec_of(impl_.kind), impl_.policies) + ": " + message;
  if (stopped_early(f)) note_stop_seen();  // a port's wait cut short reports the stop itself
  failure_ = std::move(f);
  return false;
}

bool session::report(std::string check, std::string message) {
  if (failure_ || ops_.empty()) return false;
  // A driver's comparison cut short by a stop (its recompute stopped too) is no finding.
  if (const stop_reason why = stop_requested(); why != stop_reason::none) return fail(stop_check(why), describe(why));
  return fail(std::move(check), std::move(message));
}

namespace {
/// A check that did not hold: its stable name and what it saw.
struct problem {
  std::string check, message;
};
using maybe_problem = std::optional<problem>;

/// The executor's copies of an op's arrays, as the implementation receives them.
struct guarded_inputs {
  guarded k, v, q, mask, w_uk, w_uv, x, g, beta, sinks, index_k, index_q, index_w;
  explicit guarded_inputs(const op& o)
      : k(o.k),
        v(o.v),
        q(o.q),
        mask(o.mask),
        w_uk(o.w_uk),
        w_uv(o.w_uv),
        x(o.x),
        g(o.g),
        beta(o.beta),
        sinks(o.sinks),
        index_k(o.index_k),
        index_q(o.index_q),
        index_w(o.index_w) {}
  call as_call(const op& o) const {
    return call{o,        k.view(), v.view(),    q.view(),     mask.view(),    w_uk.view(),    w_uv.view(),
                x.view(), g.view(), beta.view(), sinks.view(), index_k.view(), index_q.view(), index_w.view()};
  }

  /// No write outside an array, no change inside one.
  maybe_problem check() const {
    for (auto [g, name] : {std::pair<const guarded*, const char*>{&k, "k"},
                           {&v, "v"},
                           {&q, "q"},
                           {&mask, "mask"},
                           {&w_uk, "w_uk"},
                           {&w_uv, "w_uv"},
                           {&x, "x"},
                           {&g, "g"},
                           {&beta, "beta"},
                           {&sinks, "sinks"},
                           {&index_k, "index_k"},
                           {&index_q, "index_q"},
                           {&index_w, "index_w"}}) {
      if (!g->sentinels_intact())
        return problem{"stray-write", std::string("wrote outside the caller's ") + name + " array"};
      if (!g->unchanged()) return problem{"input-modified", std::string("modified the caller's ") + name};
    }
    return std::nullopt;
  }
  /// The caller now reuses its arrays: a cache that kept them reads NaN from here on.
  void poison_into(std::vector<std::vector<double>>& kept) {
    for (guarded* a : {&k, &v, &q, &mask, &w_uk, &w_uv, &x, &g, &beta, &sinks, &index_k, &index_q, &index_w})
      a->poison(), kept.push_back(std::move(a->buf));
  }
};

/// Accepted or refused as the model says (a refusal for an acceptable reason), and the same victims.
maybe_problem outcome_problem(const op& o, const expectation& want, const op_outcome& got) {
  if (got.unsupported) return problem{"not-supported", std::string("the implementation has no ") + to_string(o.kind)};
  if (got.accepted != want.accepted || (!got.accepted && !(got.reason & (want.reasons | refuse_unspecified))))
    return problem{"outcome", outcome_text(got.accepted, got.reason) +
                                  (got.message.empty() ? "" : " \"" + got.message + "\"") + ", expected " +
                                  outcome_text(want.accepted, want.reasons)};
  auto sorted = [](std::vector<std::int64_t> h) { return std::sort(h.begin(), h.end()), h; };
  if (want.accepted && sorted(got.preempted) != sorted(want.preempted))
    return problem{"preemption",
                   "preempted " + handles_text(got.preempted) + ", expected " + handles_text(want.preempted)};
  return std::nullopt;
}

/// The values a trace pins (the seed's worked example, vectors).
maybe_problem pinned_problem(const pinned& e, const op_outcome& got, const snapshot& observed,
                             const numeric_profile& prof) {
  if (e.accepted && *e.accepted != got.accepted)
    return problem{"pinned", std::string("expected ") + (*e.accepted ? "accepted" : "refused")};
  if (e.size)
    for (const auto& [name, value] : observed.counters)
      if (name == "size" && value != static_cast<std::int64_t>(*e.size))
        return problem{"pinned", "size " + std::to_string(value) + ", expected " + std::to_string(*e.size)};
  // Pinned decimals are for double caches; a narrower declared format resolves fewer.
  const int decimals = std::min(e.decimals, pinned_decimals(prof));
  if (decimals < 0) return std::nullopt;  // integer groups: the oracle alone judges the numbers
  for (auto [want, have, name] :
       {std::tuple{&e.output, &got.output, "output"}, std::tuple{&e.weights, &got.weights, "weights"}}) {
    if (want->empty()) continue;
    bool same = want->size() == have->size();
    for (std::size_t i = 0; same && i < want->size(); ++i) same = pinned_equal((*have)[i], (*want)[i], decimals);
    if (!same)
      return problem{
          "pinned", std::string(name) + " differs from the pinned values at " + std::to_string(decimals) + " decimals"};
  }
  return std::nullopt;
}
}  // namespace

bool session::step(const op& o) {
  if (failure_) return false;
  observed_.reset();
  ops_.push_back(o);
  if (const stop_reason why = stop_requested(); why != stop_reason::none) return fail(stop_check(why), describe(why));
  if (probe_) probe_->before(*model_, o);
  expectation want = model_->apply(o);
  if (probe_) probe_->after(*model_, o, want, events_);
  if (!want.accepted) events_.set(refused_);
  formats_.substitute(want);
  guarded_inputs inputs(o);
  if (!call_implementation([&] { last_ = subject_->apply(inputs.as_call(o)); }, "")) return false;
  if (const auto p = inputs.check()) return fail(p->check, p->message);
  inputs.poison_into(kept_buffers_);
  const std::string note = want.note.empty() ? "" : " (" + want.note + ")";
  if (const auto p = outcome_problem(o, want, last_)) return fail(p->check, p->message + note);
  if (want.accepted && o.kind == op_kind::decode && !check_decodes(want, last_)) return false;
  if (want.accepted && !want.output_bound.empty() && !judge_outputs(want, last_)) return false;
  snapshot expected = model_->observe();
  snapshot observed;
  if (!call_implementation([&] { observed = subject_->observe_against(expected); }, " while observing")) return false;
  if (const auto p = formats_.check_state(expected, observed)) return fail(p->check, p->message);
  if (const std::string d = diff(expected, observed); !d.empty())
    return fail("state", d + formats_.hint(expected, observed) + note);
  // A prefill's queries attend the rows it appended: judged once the cache has exposed them (integer groups).
  if (want.accepted && o.kind == op_kind::prefill) {
    formats_.substitute(want);
    if (!check_decodes(want, last_)) return false;
  }
  if (o.expect)
    if (const auto p = pinned_problem(*o.expect, last_, observed, impl_.profile)) return fail(p->check, p->message);
  observed_ = std::move(observed);
  return true;
}

const snapshot& session::observe() {
  if (!observed_) observed_ = subject_ ? subject_->observe() : snapshot{};
  return *observed_;
}

bool session::call_implementation(const std::function<void()>& body, const char* when) {
  try {
    body();
    return true;
  } catch (const subject_failure& e) {
    return fail(e.check, e.what());
  } catch (const std::exception& e) {
    return fail("exception", std::string("unexpected exception") + when + ": " + e.what());
  } catch (...) {
    return fail("exception", std::string("unexpected non-standard exception") + when);
  }
}

namespace {
bool has_infinity(const shared_doubles& v, std::size_t from, std::size_t count) {
  return std::any_of(v.begin() + from, v.begin() + from + count, [](double x) { return std::isinf(x); });
}
}  // namespace

bool session::check_decodes(const expectation& want, const op_outcome& got) {
  const std::vector<attention_problem>& problems = want.problems;
  std::size_t n_out = 0, n_w = 0;
  for (const auto& p : problems) n_out += p.d_v, n_w += p.n;
  if (got.output.size() != n_out || got.weights.size() != n_w)
    return fail("decode-shape", "output has " + std::to_string(got.output.size()) + " and weights " +
                                    std::to_string(got.weights.size()) + " entries, expected " + std::to_string(n_out) +
                                    " and " + std::to_string(n_w));
  ++stats_.decodes;
  if (!want.judge_numbers) return masked_weights_zero(want, got);
  for (const attention_problem& p : problems)
    for (std::size_t i = 0; i < p.n; ++i)
      if (p.is_live(i) && (has_infinity(p.keys, i * p.d_k, p.d_k) || has_infinity(p.values, i * p.d_v, p.d_v)))
        events_.set(infinity_);
  if (sample_seed_) {  // the first decode, about one in four others, and the last (finish_decodes)
    const std::uint64_t h = fnv1a(std::to_string(*sample_seed_) + "/" + std::to_string(stats_.decodes));
    if (stats_.decodes > 1 && h % 4 != 0) {
      unjudged_ = unjudged{ops_.size() - 1, want, got.output, got.weights};
      ++stats_.unjudged;  // until finish_decodes judges it, if it stays the last
      return true;
    }
    unjudged_.reset();
  }
  return judge_decodes(ops_.size() - 1, want, got.output, got.weights, true);
}

bool session::masked_weights_zero(const expectation& want, const op_outcome& got) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < want.problems.size(); ++i) {
    const attention_problem& p = want.problems[i];
    for (std::size_t j = 0; j < p.n; ++j, ++at)
      if (!p.is_live(j) && got.weights[at] != 0)
        return fail("decode-masked", "problem " + std::to_string(i) + ": weight " + std::to_string(j) + " = " +
                                         std::to_string(got.weights[at]) + " of a row its query does not see");
  }
  return true;
}

bool session::judge_outputs(const expectation& want, const op_outcome& got) {
  const std::size_t n = want.output.size();
  if (got.output.size() != n)
    return fail("output-shape",
                "output has " + std::to_string(got.output.size()) + " entries, expected " + std::to_string(n));
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::abs(got.output[i] - want.output[i]), bound = want.output_bound[i];
    if (!(err <= bound)) {  // NaN is never within
      stats_.ratios.add_failure();
      std::ostringstream m;
      m.precision(17);
      m << "output " << i / want.width << " entry " << i % want.width << " is " << got.output[i] << ", expected "
        << want.output[i] << " within " << bound;
      return fail("output", m.str());
    }
    if (bound > 0 && std::isfinite(bound)) worst = std::max(worst, err / bound);
  }
  ++stats_.decodes, ++stats_.numeric;
  if (worst >= stats_.worst_ratio) stats_.worst_op = ops_.size() - 1;
  stats_.worst_ratio = std::max(stats_.worst_ratio, worst);
  stats_.ratios.add(worst);
  return true;
}

bool session::finish_decodes() {
  if (failure_ || !unjudged_) return !failure_;
  const unjudged u = std::move(*unjudged_);
  unjudged_.reset(), --stats_.unjudged;
  // Its end-to-end figure is left out: the storage errors it needs are those of the state it was made in.
  if (judge_decodes(u.op_index, u.want, u.output, u.weights, false)) return true;
  failure_->op_index = u.op_index, failure_->op_name = to_string(ops_[u.op_index].kind);
  return false;
}

bool session::choose_rows(const expectation& given, const std::vector<double>& weights, expectation& resolved) {
  const auto& ps = given.problems;
  if (std::none_of(ps.begin(), ps.end(), [](const attention_problem& p) { return p.choice != nullptr; })) return true;
  resolved = given;
  const std::string why = resolve_choices(resolved, weights);
  return why.empty() || fail("decode-top-k", why);
}

bool session::judge_decodes(std::size_t op_index, const expectation& given, const std::vector<double>& output,
                            const std::vector<double>& weights, bool end_to_end) {
  expectation resolved;
  if (!choose_rows(given, weights, resolved)) return false;
  const expectation& want = resolved.problems.empty() ? given : resolved;
  const std::vector<attention_problem>& problems = want.problems;
  std::size_t at_o = 0, at_w = 0;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto& p = problems[i];
    const decode_verdict dv = check_decode(p, output.data() + at_o, weights.data() + at_w, impl_.profile);
    if (dv.numeric && (stats_.numeric == 0 || dv.ratio > stats_.worst_ratio)) stats_.worst_op = op_index;
    stats_.worst_ratio = std::max(stats_.worst_ratio, dv.ratio);
    stats_.numeric += dv.numeric;
    if (dv.numeric) dv.check.empty() ? stats_.ratios.add(dv.ratio) : stats_.ratios.add_failure();
    if (!dv.check.empty())
      return fail(dv.check, (problems.size() > 1 ? "problem " + std::to_string(i) + ": " : "") + dv.message);
    if (const double e2e =
            end_to_end ? formats_.end_to_end(want, i, output.data() + at_o, weights.data() + at_w, dv.bound) : -1;
        e2e >= 0)
      ++stats_.end_to_end, stats_.worst_end_to_end = std::max(stats_.worst_end_to_end, e2e);
    at_o += p.d_v, at_w += p.n;
  }
  return true;
}

verdict run_trace(const trace& t, const implementation& impl) {
  session s(t.config, impl);
  for (const op& o : t.ops)
    if (!s.step(o)) break;
  return {s.failed(), s.stats(), s.events()};
}

}  // namespace kvconform
