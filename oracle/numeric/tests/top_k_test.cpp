// Sparse top-k (docs/numerics.md §7.4): stored index keys and index scores against an MPFR referee, the slack against
// caches computing in every order, a choice judged as a set, and the bound over the rows a cache chose.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <iostream>
#include <random>

#include "oracle/numeric/attention_oracle.h"
#include "oracle/numeric/bound.h"
#include "oracle/numeric/element_rounding.h"
#include "oracle/numeric/numeric_profile.h"
#include "oracle/numeric/top_k.h"

namespace kv = kvconform;
namespace mp = boost::multiprecision;
using referee = mp::number<mp::mpfr_float_backend<60>, mp::et_off>;

namespace {
kv::attention_semantics indexer(std::size_t heads, std::size_t width) {
  return {.top_k = 4,
          .index_heads = heads,
          .index_width = width,
          .index_element = kv::element_format::e4m3,
          .index_row_scaled = true};
}

/// One query's index inputs and a few stored index keys, Gaussian at `scale`.
struct draw {
  std::vector<double> q, w, keys;  // heads x width, heads, rows x width (as stored)
  draw(const kv::attention_semantics& a, std::size_t rows, double scale, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    for (std::size_t j = 0; j < a.index_heads * a.index_width; ++j) q.push_back(g(rng));
    for (std::size_t h = 0; h < a.index_heads; ++h) w.push_back(g(rng));
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<double> x;
      for (std::size_t j = 0; j < a.index_width; ++j) x.push_back(scale * g(rng));
      const auto s = kv::stored_index_row(a, x.data());
      keys.insert(keys.end(), s.begin(), s.end());
    }
  }
};

referee exact_score(const kv::attention_semantics& a, const draw& d, std::size_t r) {
  referee total = 0;
  for (std::size_t h = 0; h < a.index_heads; ++h) {
    referee dot = 0;
    for (std::size_t j = 0; j < a.index_width; ++j)
      dot += referee(d.q[h * a.index_width + j]) * referee(d.keys[r * a.index_width + j]);
    if (dot > 0) total += referee(d.w[h]) * dot;
  }
  return total;
}

/// A cache's index score in `Acc`: forward or backward over the width, with or without FMA, heads summed in order.
template <class Acc>
Acc cache_score(const kv::attention_semantics& a, const draw& d, std::size_t r, int order) {
  Acc total = 0;
  for (std::size_t h = 0; h < a.index_heads; ++h) {
    Acc dot = 0;
    for (std::size_t i = 0; i < a.index_width; ++i) {
      const std::size_t j = order & 1 ? a.index_width - 1 - i : i;
      const Acc qj = Acc(d.q[h * a.index_width + j]), kj = Acc(d.keys[r * a.index_width + j]);
      dot = order & 2 ? std::fma(qj, kj, dot) : dot + qj * kj;
    }
    total += Acc(d.w[h]) * std::max(Acc(0), dot);
  }
  return total;
}
}  // namespace

// A row-scaled e4m3 key is its scale times the e4m3 value nearest the exact quotient x / s (saturating at 448).
TEST(TopK, StoredIndexRowsRoundTheExactQuotientOnce) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    const auto a = indexer(1, 1 + seed % 67);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    std::vector<double> x;
    for (std::size_t j = 0; j < a.index_width; ++j) x.push_back(std::ldexp(g(rng), static_cast<int>(seed % 41) - 20));
    const auto stored = kv::stored_index_row(a, x.data());
    double amax = 0;
    for (double v : x) amax = std::max(amax, std::fabs(v));
    const double s = static_cast<float>(amax / 448);
    for (std::size_t j = 0; j < a.index_width; ++j) {
      const double code = stored[j] / s;
      ASSERT_EQ(kv::round_element(kv::formats::e4m3, code), code) << "seed " << seed << " entry " << j;
      const referee y = referee(x[j]) / referee(s);
      const int e = std::max(std::ilogb(std::fabs(code) > 0 ? std::fabs(code) : 1.0), -6);
      const double half = std::ldexp(1.0, e - 4);  // half the spacing of 3 mantissa bits at code's binade
      if (abs(y) <= 448) {
        EXPECT_LE(double(abs(y - referee(code))), half) << "seed " << seed << " entry " << j;
      }
    }
  }
}

TEST(TopK, IndexScoresAgreeWithMpfrAndTheSlackCoversEveryOrder) {
  double worst_value = 0, worst32 = 0, worst64 = 0;
  for (std::size_t heads : {1, 2, 8})
    for (std::size_t width : {1, 7, 128})
      for (double scale : {1e-3, 1.0, 1e3})
        for (unsigned seed = 0; seed < 8; ++seed) {
          const auto a = indexer(heads, width);
          const draw d(a, 6, scale, seed);
          for (std::size_t r = 0; r < 6; ++r) {
            const referee want = exact_score(a, d, r);
            const double* key = d.keys.data() + r * width;
            const auto s64 = kv::score_index_row(a, d.q.data(), d.w.data(), key, 0x1p-53, 0x1p-1022);
            const double v_err = double(abs(referee(s64.value) - want));
            EXPECT_LE(v_err, std::ldexp(std::fabs(s64.value), -52) + 1e-300);
            worst_value = std::max(worst_value, v_err / (std::fabs(s64.value) + 1e-300));
            for (int order = 0; order < 4; ++order) {
              // float inputs: the query and weights as an f32 profile rounds them
              draw f = d;
              for (std::vector<double>* v : {&f.q, &f.w})
                for (double& x : *v) x = float(x);
              const referee want32 = exact_score(a, f, r);
              const auto slack32 = kv::score_index_row(a, f.q.data(), f.w.data(), key, 0x1p-24, 0x1p-126);
              const double e32 = double(abs(referee(double(cache_score<float>(a, f, r, order))) - want32));
              const double e64 = double(abs(referee(cache_score<double>(a, d, r, order)) - want));
              EXPECT_LE(e32, slack32.slack) << heads << "x" << width << " scale " << scale << " seed " << seed;
              EXPECT_LE(e64, s64.slack) << heads << "x" << width << " scale " << scale << " seed " << seed;
              worst32 = std::max(worst32, e32 / slack32.slack), worst64 = std::max(worst64, e64 / s64.slack);
            }
          }
        }
  // The slack is not vacuous: float caches use a visible part of it.
  EXPECT_GT(worst32, 1e-3);
  std::cout << "[ measured ] index score vs MPFR, worst relative error " << worst_value
            << "; worst cache error / slack: f32 " << worst32 << ", f64 " << worst64 << "\n";
}

TEST(TopK, TheDeclarationReadsBackAndIsRefusedOtherwise) {
  kv::numeric_profile p;
  p.attention = indexer(2, 8);
  const kv::numeric_profile back = kv::profile_from_json(p.to_json());
  EXPECT_EQ(back.attention, p.attention);
  EXPECT_EQ(back.attention.describe(), "top-4 by a 2x8 e4m3 row-scaled index");
  EXPECT_EQ(kv::profile_from_json(R"({"attention": {"sparse": {"top_k": 2, "heads": 1, "width": 3, "index": "fp16"}}})")
                .attention.index_text(),
            "fp16");
  for (const char* bad : {R"({"attention": {"sparse": {"top_k": 4}}})",
                          R"({"attention": {"sparse": {"top_k": 0, "heads": 1, "width": 1}}})",
                          R"({"attention": {"sparse": {"top_k": 4, "heads": 1, "width": 1, "index": "e4m3 scaled"}}})",
                          R"({"attention": {"sparse": {"top_k": 4, "heads": 1, "width": 1, "colour": 1}}})",
                          R"({"attention": {"sparse": {"top_k": -4, "heads": 1, "width": 1}}})",
                          R"({"attention": {"sparse": "top-k 4"}})"})
    EXPECT_THROW(kv::profile_from_json(bad), std::invalid_argument) << bad;
  // Ring and hybrid serve sinks and caps over their window; top-k is flat's.
  EXPECT_NE(kv::kind_problem(p, false, false, kv::attention_served::over_config_window), "");
  EXPECT_EQ(kv::kind_problem(p, false, false, kv::attention_served::all), "");
}

namespace {
/// Scores 5, 4, 3, 3, 1 for rows 0..4 (rows 2 and 3 tie exactly), slack 1e-12 each, k = 3.
kv::top_k_choice five_rows() {
  return {.k = 3, .candidate = {1, 1, 1, 1, 1}, .score = {5, 4, 3, 3, 1}, .slack = std::vector<double>(5, 1e-12)};
}
std::vector<unsigned char> judged(const kv::top_k_choice& c, std::vector<double> weights, std::string* why) {
  std::vector<unsigned char> live;
  *why = kv::resolve_choice(c, weights.data(), live);
  return live;
}
}  // namespace

TEST(TopK, TheDeclaredOrderBreaksTiesByPosition) {
  EXPECT_EQ(kv::declared_top_k(five_rows()), (std::vector<unsigned char>{1, 1, 1, 0, 0}));
  kv::top_k_choice c = five_rows();
  c.candidate[0] = 0;  // a row the query does not see is never chosen
  EXPECT_EQ(kv::declared_top_k(c), (std::vector<unsigned char>{0, 1, 1, 1, 0}));
}

TEST(TopK, AChoiceIsJudgedAsASet) {
  const auto c = five_rows();
  std::string why;
  // The other row of the tie: admissible, and the oracle then judges the cache's rows.
  EXPECT_EQ(judged(c, {.2, .3, 0, .5, 0}, &why), (std::vector<unsigned char>{1, 1, 0, 1, 0}));
  EXPECT_EQ(why, "");
  // Row 4 is beaten by three rows for certain.
  judged(c, {.2, .3, .5, 0, 1e-9}, &why);
  EXPECT_NE(why.find("row 4 is attended"), std::string::npos) << why;
  // Four rows attended.
  judged(c, {.1, .2, .3, .4, 0}, &why);
  EXPECT_NE(why.find("4 rows are attended"), std::string::npos) << why;
  // Row 1 is among the k best beyond rounding, yet left out for row 3 and row 2.
  judged(c, {.2, 0, .4, .4, 0}, &why);
  EXPECT_NE(why.find("row 1 is not attended"), std::string::npos) << why;
  // A weight that rounded to 0: the row every admissible choice holds is judged (the oracle expects its weight).
  EXPECT_EQ(judged(c, {.5, 0, .5, 0, 0}, &why), (std::vector<unsigned char>{1, 1, 1, 0, 0}));
  EXPECT_EQ(why, "");
  // Only tied rows missing: the declared order fills them in.
  EXPECT_EQ(judged(c, {.5, .5, 0, 0, 0}, &why), (std::vector<unsigned char>{1, 1, 1, 0, 0}));
  EXPECT_EQ(why, "");
  // Given the attention scores, the tied row that would weigh least stands for the weight that rounded to 0 (a cache
  // that took the newest of a tie, whose weight underflowed, is not held to the oldest's larger weight).
  std::vector<unsigned char> live;
  const std::vector<double> weights{.5, .5, 0, 0, 0};
  EXPECT_EQ(kv::resolve_choice(c, weights.data(), live, {0, 0, 10, -1000, 0}), "");
  EXPECT_EQ(live, (std::vector<unsigned char>{1, 1, 0, 1, 0}));
}

namespace {
/// Index inputs of n = 6 to 25 rows and their choice of 4, row n - 1 repeating row n - 3's index key (an exact tie).
struct tie_case {
  std::size_t n;
  draw d;
  kv::top_k_choice c;
  explicit tie_case(unsigned seed)
      : n(6 + seed % 20), d(indexer(2, 8), n, 1.0, seed), c{.k = 4, .candidate = std::vector<unsigned char>(n, 1)} {
    std::copy_n(d.keys.begin() + static_cast<std::ptrdiff_t>((n - 3) * 8), 8,
                d.keys.begin() + static_cast<std::ptrdiff_t>((n - 1) * 8));
    for (std::size_t r = 0; r < n; ++r) {
      const auto s =
          kv::score_index_row(indexer(2, 8), d.q.data(), d.w.data(), d.keys.data() + r * 8, 0x1p-53, 0x1p-1022);
      c.score.push_back(s.value), c.slack.push_back(s.slack);
    }
  }
  /// The same scores without the ReLU.
  kv::top_k_choice without_relu() const {
    kv::top_k_choice no_relu = c;
    for (std::size_t r = 0; r < n; ++r) {
      no_relu.score[r] = 0;
      for (std::size_t h = 0; h < 2; ++h) {
        double dot = 0;
        for (std::size_t j = 0; j < 8; ++j) dot += d.q[h * 8 + j] * d.keys[r * 8 + j];
        no_relu.score[r] += d.w[h] * dot;
      }
    }
    return no_relu;
  }
  /// Rows of equal index scores (the repeated key, rows whose heads all score below 0) are interchangeable: two
  /// choices are the same when their rows' scores are.
  std::vector<double> canonical(const std::vector<unsigned char>& rows) const {
    std::vector<double> scores;
    for (std::size_t r = 0; r < n; ++r)
      if (rows[r]) scores.push_back(c.score[r]);
    std::sort(scores.begin(), scores.end());
    return scores;
  }
};

/// The largest err / bound of `out` over the rows `live` of `p`, error and bound from the MPFR referee.
double worst_ratio(kv::attention_problem p, const std::vector<unsigned char>& live, const std::vector<double>& out) {
  p.live = live;
  const auto o = kv::attention_oracle<referee>(p);
  std::vector<double> s, w, od;
  for (std::size_t i = 0; i < p.n; ++i) s.push_back(double(o.s[i])), w.push_back(double(o.w[i]));
  for (std::size_t j = 0; j < p.d_v; ++j) od.push_back(double(o.o[j]));
  const auto b = kv::compute_bound(p, s, double(o.m), w, od, {});
  double worst = 0;
  for (std::size_t j = 0; j < p.d_v; ++j) worst = std::max(worst, double(abs(referee(out[j]) - o.o[j])) / b.output[j]);
  return worst;
}
}  // namespace

// The bound over the rows a cache chose: a double decode over the other row of a tie passes against the MPFR referee;
// a cache whose indexer differs (no ReLU) is refused before any number is judged.
TEST(TopK, TheBoundHoldsOverTheChosenRows) {
  double worst = 0;
  int differ = 0, refused = 0;
  for (unsigned seed = 0; seed < 40; ++seed) {
    const tie_case t(seed);
    std::mt19937_64 rng(seed + 1000);
    std::normal_distribution<double> g;
    kv::attention_problem p;
    p.n = t.n, p.d_k = 4, p.d_v = 3;
    for (std::size_t i = 0; i < t.n * 4; ++i) p.keys.push_back(g(rng));
    for (std::size_t i = 0; i < t.n * 3; ++i) p.values.push_back(g(rng));
    for (std::size_t j = 0; j < 4; ++j) p.q.push_back(2 * g(rng));
    // The cache's choice: the declared one, with the tie going to the later row.
    std::vector<unsigned char> mine = kv::declared_top_k(t.c), live;
    if (mine[t.n - 3] && !mine[t.n - 1]) mine[t.n - 3] = 0, mine[t.n - 1] = 1;
    kv::attention_problem chosen = p;
    chosen.live = mine;
    const auto cache = kv::attention_oracle<double>(chosen);
    const std::vector<double> weights(cache.w.begin(), cache.w.end()), out(cache.o.begin(), cache.o.end());
    ASSERT_EQ(kv::resolve_choice(t.c, weights.data(), live), "") << "seed " << seed;
    ASSERT_EQ(live, mine) << "seed " << seed;
    const double r = worst_ratio(p, live, out);
    EXPECT_LT(r, 1) << "seed " << seed;
    worst = std::max(worst, r);
    // Without the ReLU the indexer ranks otherwise; where its k best differ, the choice is refused.
    const auto wrong = kv::declared_top_k(t.without_relu());
    std::vector<double> wrong_weights(t.n, 0.0);
    for (std::size_t i = 0; i < t.n; ++i) wrong_weights[i] = wrong[i] ? 0.25 : 0.0;
    if (t.canonical(wrong) != t.canonical(kv::declared_top_k(t.c)))
      ++differ, refused += kv::resolve_choice(t.c, wrong_weights.data(), live) != "";
  }
  // Away from exact ties every differing choice is refused: the slack of a double indexer is far below score gaps.
  EXPECT_GT(differ, 10);
  EXPECT_EQ(refused, differ);
  std::cout << "[ measured ] top-k decode over the cache's rows, worst err / bound: " << worst << "; no-ReLU choices "
            << "refused " << refused << " of " << differ << " that differ\n";
}
