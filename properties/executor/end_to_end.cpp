// The reported end-to-end figure (docs/numerics.md §6.4): a decode against the oracle over the rows as given.
#include <cmath>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/element_rounding.h"
#include "properties/executor/format_check.h"

namespace kvconform {

namespace {
/// The oracle in long double: the figure is reported, not judged, and storage errors are at least
/// 2^-24 relative, far above long double's own.
using L = long double;

bool finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

struct evaluated {
  std::vector<double> s, w, o;
  double m = 0;
};
evaluated evaluate(const attention_problem& p) {
  const oracle_result<L> r = attention_oracle<L>(p);
  evaluated e;
  for (std::size_t i = 0; i < p.n; ++i) e.s.push_back(double(r.s[i])), e.w.push_back(double(r.w[i]));
  for (std::size_t c = 0; c < p.d_v; ++c) e.o.push_back(double(r.o[c]));
  e.m = double(r.m);
  return e;
}
}  // namespace

std::vector<double> format_checker::element_errors(const attention_problem& given, bool keys,
                                                   std::size_t stream) const {
  const storage_format& f = format(stream, keys);
  const std::vector<double>& x = (keys ? given.keys : given.values).vector();
  std::vector<double> err(x.size(), 0.0);
  const std::vector<double>* group_err = nullptr;
  if (f.groups && stream < errors_.size()) group_err = keys ? &errors_[stream].keys : &errors_[stream].values;
  const storage_format residual{.element = f.element};
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double own = f.groups ? element_error_bound(residual, x[k], 1)
                                : element_error_bound(f, x[k], keys ? c_.k_scale : c_.v_scale);
    err[k] = own + (group_err && k < group_err->size() ? (*group_err)[k] : 0.0);
  }
  return err;
}

double format_checker::end_to_end(const expectation& e, std::size_t i, const double* output, const double* weights,
                                  const attention_bound& judged) const {
  if (!p_.rounds_storage() || i >= e.originals.size() || i >= e.streams.size()) return -1;
  const attention_problem &given = e.originals[i], &exposed = e.problems[i];
  for (const auto* v :
       {&given.keys.vector(), &given.values.vector(), &given.q, &exposed.keys.vector(), &exposed.values.vector()})
    if (!finite(*v)) return -1;
  const bool reuse = judged.output.size() == exposed.d_v && judged.weights.size() == exposed.n;
  attention_bound computed;
  if (!reuse) {
    const evaluated x = evaluate(exposed);
    computed = compute_bound(exposed, x.s, x.m, x.w, x.o, p_);
  }
  const attention_bound& working = reuse ? judged : computed;
  if (!working.in_domain) return -1;
  // The reference stays in long double: a weight below double's range may grow by e^{e_i + A}.
  const oracle_result<L> o = attention_oracle<L>(given);
  const std::vector<double> dk = element_errors(given, true, e.streams[i]),
                            dv = element_errors(given, false, e.streams[i]);
  // e_i bounds the score error the stored keys cause; A the normaliser's share (as Abar, docs/numerics.md
  // §3.2). Weights stay as logarithms: a weight below long double's range may still grow by e^{e_i + A}.
  std::vector<L> score_err(given.n, 0), log_w(given.n, -INFINITY);
  L l = 0;
  for (std::size_t r = 0; r < given.n; ++r)
    if (given.is_live(r)) l += std::exp(o.s[r] - o.m);
  L A = -INFINITY;
  for (std::size_t r = 0; r < given.n; ++r) {
    if (!given.is_live(r)) continue;
    for (std::size_t j = 0; j < given.d_k; ++j) score_err[r] += dk[r * given.d_k + j] * std::fabs(given.q[j]);
    score_err[r] /= std::sqrt(static_cast<L>(given.d_k));
    log_w[r] = o.s[r] - o.m - std::log(l);
    const L t = log_w[r] + score_err[r];
    A = std::max(A, t) + std::log1p(std::exp(-std::fabs(A - t)));  // log-sum-exp
  }
  // w_i (e^{e_i + A} - 1) and w_i e^{e_i + A}, without forming an underflowed w_i first.
  auto grown = [&](std::size_t r) { return std::exp(log_w[r] + score_err[r] + A); };
  auto moved = [&](std::size_t r) {
    return score_err[r] + A > 1 ? grown(r) : std::exp(log_w[r]) * std::expm1(score_err[r] + A);
  };
  // Once per row, not once per row and column: they are the figure's costliest terms (exp in long double).
  std::vector<L> grown_r(given.n, 0), moved_r(given.n, 0);
  for (std::size_t r = 0; r < given.n; ++r)
    if (given.is_live(r)) grown_r[r] = grown(r), moved_r[r] = moved(r);
  double ratio = 0;
  auto judge = [&](double got, L want, L bound) {
    if (!std::isfinite(got) || !(bound > 0)) return;
    ratio = std::max(ratio, static_cast<double>(std::fabs(got - want) / bound));
  };
  for (std::size_t c = 0; c < given.d_v; ++c) {
    L b = working.output[c];
    for (std::size_t r = 0; r < given.n; ++r)
      if (given.is_live(r))
        b += moved_r[r] * std::fabs(given.values[r * given.d_v + c]) + grown_r[r] * dv[r * given.d_v + c];
    judge(output[c], o.o[c], b);
  }
  for (std::size_t r = 0; r < given.n; ++r)
    if (given.is_live(r)) judge(weights[r], o.w[r], moved_r[r] + working.weights[r]);
  return ratio;
}

}  // namespace kvconform
