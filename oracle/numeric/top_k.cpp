// Sparse top-k's stored index keys, index scores and slack, and the judgement of a choice (docs/numerics.md §7.4).
#include "oracle/numeric/top_k.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "oracle/numeric/double_double.h"
#include "oracle/numeric/element_rounding.h"

namespace kvconform {

std::vector<double> stored_index_row(const attention_semantics& a, const double* x) {
  const std::size_t d = a.index_width;
  storage_format f{.element = a.index_element, .overflow = overflow_rule::saturate, .scaled = a.index_row_scaled};
  std::vector<double> row(d, 0.0);
  double scale = 1;
  if (a.index_row_scaled) {
    double amax = 0;
    for (std::size_t j = 0; j < d; ++j) amax = std::max(amax, std::fabs(x[j]));
    scale = static_cast<float>(amax / limits_of(a.index_element).max);
    if (scale == 0) return row;
  }
  for (std::size_t j = 0; j < d; ++j) row[j] = store_element(f, x[j], scale);
  return row;
}

index_score score_index_row(const attention_semantics& a, const double* q, const double* w, const double* key, double u,
                            double tiny) {
  const std::size_t heads = a.index_heads, d = a.index_width;
  dd::ddouble total{0, 0};
  double magnitude = 0;
  for (std::size_t h = 0; h < heads; ++h) {
    dd::ddouble dot{0, 0};
    double abs_dot = 0;
    for (std::size_t j = 0; j < d; ++j) {
      dot = dd::add(dot, dd::two_prod(q[h * d + j], key[j]));
      abs_dot += std::fabs(q[h * d + j] * key[j]);
    }
    if (dot.hi > 0) total = dd::add(total, dd::mul(dot, w[h]));
    magnitude += std::fabs(w[h]) * abs_dot;
  }
  const double n = static_cast<double>(d + heads + 1), gamma = n * u / (1 - n * u);
  // Twice gamma_{D+H+1}: once for the cache's products and sums (with the dequantising multiply), once for `magnitude`
  // itself, summed here in double; 2^-52 |value| for rounding the double-double score; `tiny` per op for underflow.
  const double value = total.hi + total.lo;
  return {value, 2 * gamma * magnitude + 0x1p-52 * std::fabs(value) + (n + 1) * tiny};
}

namespace {
/// Candidates in the declared order: score descending, then position ascending.
std::vector<std::size_t> ranked(const top_k_choice& c) {
  std::vector<std::size_t> r;
  for (std::size_t i = 0; i < c.score.size(); ++i)
    if (c.candidate[i]) r.push_back(i);
  std::stable_sort(r.begin(), r.end(), [&](std::size_t x, std::size_t y) { return c.score[x] > c.score[y]; });
  return r;
}

std::string num(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}
}  // namespace

std::vector<unsigned char> declared_top_k(const top_k_choice& c) {
  std::vector<unsigned char> live(c.score.size(), 0);
  const auto r = ranked(c);
  for (std::size_t i = 0; i < std::min(c.k, r.size()); ++i) live[r[i]] = 1;
  return live;
}

bool ambiguous_at_k(const top_k_choice& c) {
  const auto r = ranked(c);
  if (r.size() <= c.k) return false;
  const std::size_t a = r[c.k - 1], b = r[c.k];
  return c.score[a] - c.slack[a] <= c.score[b] + c.slack[b];
}

std::string resolve_choice(const top_k_choice& c, const double* weights, std::vector<unsigned char>& live,
                           const std::vector<double>& attention) {
  const std::size_t n = c.score.size();
  const auto order = ranked(c);
  auto lo = [&](std::size_t i) { return c.score[i] - c.slack[i]; };
  auto hi = [&](std::size_t i) { return c.score[i] + c.slack[i]; };
  // r may be among the k best unless k rows beat it for certain; it must be unless k others may beat it. Counted by
  // binary search over the sorted bounds (a long trace's decode sees thousands of rows).
  std::vector<double> los, his;
  for (std::size_t j : order) los.push_back(lo(j)), his.push_back(hi(j));
  std::sort(los.begin(), los.end()), std::sort(his.begin(), his.end());
  auto beaten_for_certain = [&](std::size_t r) { return los.end() - std::upper_bound(los.begin(), los.end(), hi(r)); };
  auto may_beat = [&](std::size_t r) {  // r itself has hi(r) >= lo(r)
    return his.end() - std::lower_bound(his.begin(), his.end(), lo(r)) - 1;
  };
  if (order.size() <= c.k) {  // no choice to make: every candidate is attended
    live.assign(c.candidate.begin(), c.candidate.end());
    return "";
  }
  const auto k = static_cast<std::ptrdiff_t>(c.k);
  const std::size_t kth = order[c.k - 1];
  const std::string head = "top-" + std::to_string(c.k) + ": row ",
                    declared = "declared: the k rows of highest sum_h w_h max(0, q_h . key) (docs/numerics.md §7.4)";
  live.assign(n, 0);
  std::size_t attended = 0;
  for (std::size_t r : order) {
    if (weights[r] == 0) continue;  // NaN counts as attended
    if (beaten_for_certain(r) >= k)
      return head + std::to_string(r) + " is attended, but its index score " + num(c.score[r]) +
             " is below the k-th best's " + num(c.score[kth]) + " by more than the index's rounding (" +
             num(c.slack[r] + c.slack[kth]) + "); " + declared;
    live[r] = 1, ++attended;
  }
  if (attended > c.k)
    return "top-" + std::to_string(c.k) + ": " + std::to_string(attended) + " rows are attended, the declared " +
           "top-k attends " + std::to_string(c.k) + "; " + declared;
  for (std::size_t r : order)  // rows whose weights rounded to 0, or were left out
    if (!live[r] && may_beat(r) < k) {
      if (attended == c.k)
        return head + std::to_string(r) + " is not attended, but its index score " + num(c.score[r]) +
               " is among the k best by more than the index's rounding; " + declared;
      live[r] = 1, ++attended;
    }
  // Weights that rounded to 0: the admissible rows that would weigh least stand for them.
  std::vector<std::size_t> fill(order);
  if (!attention.empty())
    std::stable_sort(fill.begin(), fill.end(),
                     [&](std::size_t x, std::size_t y) { return attention[x] < attention[y]; });
  for (std::size_t r : fill)
    if (attended < c.k && !live[r] && beaten_for_certain(r) < k) live[r] = 1, ++attended;
  return "";
}

}  // namespace kvconform
