// The recurrence in double-double and its bound; every term of the bound is explained in docs/numerics.md §3.9.
#include "oracle/numeric/recurrence.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "oracle/numeric/recurrence_sweep.h"

namespace kvconform {

const char* to_string(recurrence_form f) { return f == recurrence_form::decay ? "decay" : "delta"; }

std::string recurrence_shape_invalid(std::size_t d_k, std::size_t d_v, std::size_t width, std::size_t taps) {
  if (d_k == 0 || d_v == 0) return "d_k and d_v must be positive";
  if (width == 0) return "the convolution's width must be at least 1";
  if (taps != width * (2 * d_k + d_v)) return "conv must hold width x (2 d_k + d_v) taps";
  return {};
}

std::string recurrence_problem::invalid() const {
  const std::size_t ch = channels(), T = steps();
  if (auto why = recurrence_shape_invalid(d_k, d_v, width, conv.size()); !why.empty()) return why;
  if (x.size() != T * ch) return "x must hold one row of 2 d_k + d_v channels per log decay";
  if (form == recurrence_form::delta && beta.size() != T) return "the delta rule needs one write strength per token";
  for (double v : g)
    if (!(v <= 0)) return "log decays must be <= 0";
  for (double b : beta)
    if (!(b >= 0 && b <= 1)) return "write strengths must lie in [0, 1]";
  for (const auto* values : {&conv, &x})
    for (double v : *values)
      if (!std::isfinite(v)) return "taps and inputs must be finite";
  return {};
}

namespace {
using namespace recurrence_terms;

/// sqrt of a double-double: the root of the high part and one Newton step on the exact residual.
ddouble sqrt_dd(ddouble a) {
  if (a.hi <= 0) return {0, 0};
  const double r = std::sqrt(a.hi);
  return dd::fast_two_sum(r, dd::sub(a, dd::two_prod(r, r)).hi / (2 * r));
}

/// The convolved channels of the row at `at` of `rows` (which holds width - 1 rows before it) in double-double
/// (exact products, double-double sums), and their magnitudes sum_i |conv_i| |x_{t-i}| in double.
void convolve(const std::vector<double>& conv, std::size_t width, std::size_t ch, const double* rows, std::size_t at,
              std::vector<ddouble>& out, std::vector<double>& mag) {
  for (std::size_t c = 0; c < ch; ++c) {
    ddouble s{};
    double m = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const double tap = conv[i * ch + c], x = rows[(at - i) * ch + c];
      s = dd::add(s, dd::two_prod(tap, x)), m += std::fabs(tap) * std::fabs(x);
    }
    out[c] = s, mag[c] = m;
  }
}

/// Divides v[0, n) by its 2-norm in double-double; returns the norm (0 leaves v as it is: zeros).
double normalise(ddouble* v, std::size_t n) {
  ddouble s{};
  for (std::size_t j = 0; j < n; ++j) s = dd::add(s, dd::mul(v[j], v[j]));
  const ddouble norm = sqrt_dd(s);
  if (norm.hi > 0)
    for (std::size_t j = 0; j < n; ++j) v[j] = dd::div(v[j], norm);
  return norm.hi;
}

}  // namespace

recurrence_tracker::recurrence_tracker(recurrence_form form, std::size_t d_k, std::size_t d_v, std::size_t width,
                                       std::vector<double> conv, recurrence_precision prec, dd_kernels kernels)
    : form_(form), d_k_(d_k), d_v_(d_v), width_(width), conv_(std::move(conv)),
      window_(width ? (width - 1) * (2 * d_k + d_v) : 0, 0.0), prec_(prec), kernels_(kernels), S_(d_k * d_v),
      decay_(form == recurrence_form::decay ? d_k * d_v : 0), delta_(form == recurrence_form::delta ? d_v : 0) {
  if (auto why = recurrence_shape_invalid(d_k, d_v, width, conv_.size()); !why.empty())
    throw std::invalid_argument("recurrence_tracker: " + why);
}

void recurrence_tracker::advance(const double* x, const double* g, const double* beta, std::size_t n,
                                 dd::ddouble* out, double* out_bound) {
  const std::size_t d_k = d_k_, d_v = d_v_, ch = 2 * d_k + d_v, held = width_ - 1;
  const token_context tc{d_k, d_v, static_cast<double>(width_), static_cast<double>(d_k), prec_};
  std::vector<double> rows(window_);
  rows.insert(rows.end(), x, x + n * ch);
  std::vector<ddouble> xc(ch), proj(d_v);
  std::vector<double> mag(ch), entries(d_k * d_v);
  for (std::size_t i = 0; i < n; ++i, ++t_) {
    convolve(conv_, width_, ch, rows.data(), held + i, xc, mag);
    ddouble *q = xc.data(), *k = q + d_k, *v = k + d_k;
    const ddouble alpha = dd::exp({g[i], 0});
    ddouble* o = out + i * d_v;
    double* ob = out_bound + i * d_v;
    const double t1 = static_cast<double>(t_ + 1);
    if (form_ == recurrence_form::delta) {
      const double kn = normalise(k, d_k), qn = normalise(q, d_k);
      std::swap(delta_.before, delta_.after);  // the last sweep's norms are this state's (zeros at first)
      run_sweep({S_.data(), d_k, d_v, alpha, q, k, v, beta[i], proj.data(), o, delta_.after.data()}, kernels_);
      delta_.token(tc, t1, g[i], beta[i], kn, qn, mag.data(), v, proj.data(), o, ob);
      continue;
    }
    run_sweep({S_.data(), d_k, d_v, alpha, q, k, v, -1.0, proj.data(), o, nullptr}, kernels_);
    decay_.step(alpha.hi, -g[i], mag.data() + d_k, mag.data() + 2 * d_k, d_k, d_v, prec_.u_state);
    // The output's terms beyond the state's: the three convolutions and the read-out's dot product.
    decay_.errors(prec_.u, t1, 3 * tc.w + tc.dk + 4, decay_.floor(t1, tc.w, prec_.mu), entries);
    for (std::size_t c = 0; c < d_v; ++c) ob[c] = 0;
    for (std::size_t j = 0; j < d_k; ++j)
      for (std::size_t c = 0; c < d_v; ++c)  // past the domain every entry is +inf, and so is the output (not NaN)
        ob[c] += std::isinf(entries[j * d_v + c]) ? entries[j * d_v + c] : mag[j] * entries[j * d_v + c];
    for (std::size_t c = 0; c < d_v; ++c) ob[c] = tc.finish(ob[c] + (tc.dk + 2) * prec_.mu, o[c]);
  }
  window_.assign(rows.end() - static_cast<std::ptrdiff_t>(held * ch), rows.end());
}

std::vector<double> recurrence_tracker::state_bound() const {
  std::vector<double> b(d_k_ * d_v_, 0.0);
  if (form_ == recurrence_form::delta) {
    for (std::size_t e = 0; e < b.size(); ++e)
      b[e] = std::isinf(delta_.chunk) ? delta_.chunk
                                      : prec_.F * (delta_.E[e % d_v_] + delta_.chunk * delta_.U[e % d_v_]);
  } else if (t_ > 0) {
    const double t1 = static_cast<double>(t_), w = static_cast<double>(width_);
    decay_.errors(prec_.u, t1, 2 * w + 2, decay_.floor(t1, w, prec_.mu), b);
    for (double& x : b) x *= prec_.F;
  }
  return b;
}

recurrence_run run_recurrence(const recurrence_problem& p, const recurrence_precision& prec, dd_kernels kernels) {
  recurrence_tracker tracker(p.form, p.d_k, p.d_v, p.width, p.conv, prec, kernels);
  recurrence_run r;
  r.outputs.assign(p.steps() * p.d_v, {}), r.output_bound.assign(p.steps() * p.d_v, 0);
  tracker.advance(p.x.data(), p.g.data(), p.beta.data(), p.steps(), r.outputs.data(), r.output_bound.data());
  r.state = tracker.state(), r.state_bound = tracker.state_bound();
  return r;
}

std::vector<double> kind_convolution(std::size_t width, std::size_t channels) {
  std::vector<double> conv(width * channels);
  for (std::size_t i = 0; i < width; ++i)
    for (std::size_t c = 0; c < channels; ++c) conv[i * channels + c] = i == 0 ? 1.0 : (i + c) % 2 ? -0.5 : 0.25;
  return conv;
}

}  // namespace kvconform
