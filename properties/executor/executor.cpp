// One executor for every source of traces: generated, fuzzed, loaded from JSON, or a port.
#include "properties/executor/executor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>

#include "properties/executor/decode_check.h"
#include "properties/kinds/kind.h"

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
  decodes += o.decodes, numeric += o.numeric;
  worst_ratio = std::max(worst_ratio, o.worst_ratio);
}

session::session(const cache_config& c, const implementation& impl) : impl_(impl), model_(make_model(c, impl.profile)) {
  try {
    subject_ = impl.make(c);
  } catch (const subject_failure& e) {
    failure_ = failure{0, "create", e.check, e.what()};
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
  f.message = std::move(message);
  failure_ = std::move(f);
  return false;
}

bool session::report(std::string check, std::string message) {
  if (failure_ || ops_.empty()) return false;
  return fail(std::move(check), std::move(message));
}

bool session::step(const op& o) {
  if (failure_) return false;
  ops_.push_back(o);
  const expectation want = model_->apply(o);

  guarded k(o.k), v(o.v), q(o.q), mask(o.mask);
  op_outcome got;
  try {
    got = subject_->apply(call{o, k.view(), v.view(), q.view(), mask.view()});
  } catch (const subject_failure& e) {
    return fail(e.check, e.what());
  } catch (const std::exception& e) {
    return fail("exception", std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return fail("exception", "unexpected non-standard exception");
  }
  last_ = got;
  for (auto [g, name] : {std::pair<guarded*, const char*>{&k, "k"}, {&v, "v"}, {&q, "q"}, {&mask, "mask"}}) {
    if (!g->sentinels_intact())
      return fail("stray-write", std::string("wrote outside the caller's ") + name + " array");
    if (!g->unchanged()) return fail("input-modified", std::string("modified the caller's ") + name);
  }
  for (guarded* g : {&k, &v, &q, &mask}) {  // the caller now reuses its arrays: a cache that kept them reads NaN
    g->poison();
    kept_buffers_.push_back(std::move(g->buf));
  }

  if (got.unsupported) return fail("not-supported", std::string("the implementation has no ") + to_string(o.kind));
  if (got.accepted != want.accepted || (!got.accepted && !(got.reason & (want.reasons | refuse_unspecified))))
    return fail("outcome", outcome_text(got.accepted, got.reason) +
                               (got.message.empty() ? "" : " \"" + got.message + "\"") + ", expected " +
                               outcome_text(want.accepted, want.reasons));

  if (want.accepted) {
    auto sorted = [](std::vector<std::int64_t> h) { return std::sort(h.begin(), h.end()), h; };
    if (sorted(got.preempted) != sorted(want.preempted))
      return fail("preemption",
                  "preempted " + handles_text(got.preempted) + ", expected " + handles_text(want.preempted));
  }

  if (want.accepted && o.kind == op_kind::decode) {
    std::size_t n_out = 0, n_w = 0;
    for (const auto& p : want.problems) n_out += p.d_v, n_w += p.n;
    if (got.output.size() != n_out || got.weights.size() != n_w)
      return fail("decode-shape", "output has " + std::to_string(got.output.size()) + " and weights " +
                                      std::to_string(got.weights.size()) + " entries, expected " +
                                      std::to_string(n_out) + " and " + std::to_string(n_w));
    std::size_t at_o = 0, at_w = 0;
    ++stats_.decodes;
    for (std::size_t i = 0; i < want.problems.size(); ++i) {
      const auto& p = want.problems[i];
      const decode_verdict dv = check_decode(p, got.output.data() + at_o, got.weights.data() + at_w, impl_.profile);
      stats_.worst_ratio = std::max(stats_.worst_ratio, dv.ratio);
      stats_.numeric += dv.numeric;
      if (!dv.check.empty())
        return fail(dv.check, (want.problems.size() > 1 ? "problem " + std::to_string(i) + ": " : "") + dv.message);
      at_o += p.d_v, at_w += p.n;
    }
  }

  snapshot observed;
  try {
    observed = subject_->observe();
  } catch (const subject_failure& e) {
    return fail(e.check, e.what());
  } catch (const std::exception& e) {
    return fail("exception", std::string("unexpected exception while observing: ") + e.what());
  }
  if (const std::string d = diff(model_->observe(), observed); !d.empty()) return fail("state", d);

  if (o.expect) {  // values a trace pins (the seed's worked example, vectors)
    const pinned& e = *o.expect;
    if (e.accepted && *e.accepted != got.accepted)
      return fail("pinned", std::string("expected ") + (*e.accepted ? "accepted" : "refused"));
    if (e.size)
      for (const auto& [name, value] : observed.counters)
        if (name == "size" && value != static_cast<std::int64_t>(*e.size))
          return fail("pinned", "size " + std::to_string(value) + ", expected " + std::to_string(*e.size));
    // Pinned decimals are for double caches; a narrower declared format resolves fewer.
    const int decimals = std::min(e.decimals, impl_.profile.working == precision::f64   ? 15
                                              : impl_.profile.working == precision::f32 ? 5
                                                                                        : 1);
    for (auto [want_v, got_v, name] :
         {std::tuple{&e.output, &got.output, "output"}, std::tuple{&e.weights, &got.weights, "weights"}}) {
      if (want_v->empty()) continue;
      bool same = want_v->size() == got_v->size();
      for (std::size_t i = 0; same && i < want_v->size(); ++i) same = pinned_equal((*got_v)[i], (*want_v)[i], decimals);
      if (!same)
        return fail("pinned",
                    std::string(name) + " differs from the pinned values at " + std::to_string(decimals) + " decimals");
    }
  }
  return true;
}

verdict run_trace(const trace& t, const implementation& impl) {
  session s(t.config, impl);
  for (const op& o : t.ops)
    if (!s.step(o)) break;
  return {s.failed(), s.stats()};
}

}  // namespace kvconform
