// The model's side of sparse top-k (docs/numerics.md §7.4): the indexer's inputs, the declared choice per problem.
#include <algorithm>
#include <cmath>
#include <memory>

#include "oracle/models/model.h"
#include "oracle/numeric/top_k.h"

namespace kvconform {

namespace {
/// Every entry finite and at most 2^64 in magnitude, so that a row's scale is finite in f32 (docs/numerics.md §7.4).
bool in_range(const tensor& t) {
  return std::all_of(t.data.begin(), t.data.end(), [](double x) { return std::fabs(x) <= 0x1p64; });
}
using shape = std::vector<std::size_t>;
}  // namespace

bool index_inputs_fit(const numeric_profile& p, const op& o, std::size_t steps) {
  const attention_semantics& a = p.attention;
  if (a.top_k == 0) return true;
  const std::size_t h = a.index_heads, d = a.index_width;
  const bool appends = o.kind == op_kind::append || o.kind == op_kind::prefill;
  if (appends && (o.index_k.shape != (o.k.shape.size() == 1 ? shape{d} : shape{steps, d}) || !in_range(o.index_k)))
    return false;
  if (o.kind == op_kind::decode)
    return o.index_q.shape == shape{h, d} && o.index_w.shape == shape{h} && in_range(o.index_q) && in_range(o.index_w);
  if (o.kind == op_kind::prefill)
    return o.index_q.shape == shape{steps, h, d} && o.index_w.shape == shape{steps, h} && in_range(o.index_q) &&
           in_range(o.index_w);
  return true;
}

void choose_top_k(expectation& e, const numeric_profile& p, const op& o,
                  const std::vector<std::vector<double>>& index_rows) {
  const attention_semantics& a = p.attention;
  if (a.top_k == 0) return;
  const std::size_t h = a.index_heads, d = a.index_width;
  for (std::size_t i = 0; i < e.problems.size(); ++i) {
    attention_problem& pr = e.problems[i];
    auto c = std::make_shared<top_k_choice>();
    c->k = a.top_k;
    for (std::size_t j = 0; j < pr.n; ++j) c->candidate.push_back(pr.is_live(j) ? 1 : 0);
    if (static_cast<std::size_t>(std::count(c->candidate.begin(), c->candidate.end(), 1)) <= a.top_k) continue;
    std::vector<double> q, w;  // query i's, rounded to the storage precision as the attention query is
    for (std::size_t j = 0; j < h * d; ++j) q.push_back(round_to(p.storage, o.index_q.data[i * h * d + j]));
    for (std::size_t j = 0; j < h; ++j) w.push_back(round_to(p.storage, o.index_w.data[i * h + j]));
    for (std::size_t j = 0; j < pr.n; ++j) {
      const index_score s = score_index_row(a, q.data(), w.data(), index_rows[j].data(), unit_roundoff(p.working),
                                            smallest_normal(p.working));
      c->score.push_back(s.value), c->slack.push_back(s.slack);
    }
    pr.live = declared_top_k(*c);
    pr.choice = c;
    if (i < e.originals.size()) e.originals[i].live = pr.live, e.originals[i].choice = c;
  }
}

std::string resolve_choices(expectation& e, const std::vector<double>& weights) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < e.problems.size(); ++i) {
    attention_problem& pr = e.problems[i];
    if (pr.choice) {
      std::vector<double> scores(pr.n);  // q . k_r orders rows as their weights do (a cap and a sink keep the order)
      for (std::size_t r = 0; r < pr.n; ++r)
        for (std::size_t j = 0; j < pr.d_k; ++j) scores[r] += pr.q[j] * pr.keys[r * pr.d_k + j];
      if (std::string why = resolve_choice(*pr.choice, weights.data() + at, pr.live, scores); !why.empty())
        return (e.problems.size() > 1 ? "problem " + std::to_string(i) + ": " : "") + why;
      if (i < e.originals.size()) e.originals[i].live = pr.live;
    }
    at += pr.n;
  }
  return "";
}

}  // namespace kvconform
