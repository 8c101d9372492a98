// Unit tests of the reference latent cache: shared value storage, both decode orders, refusals, fp8 rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "impls/latent/latent.h"
#include "impls/latent/variants.h"
#include "oracle/numeric/element_rounding.h"

namespace kv = kvconform;

namespace {
constexpr std::size_t d_c = 4, d_r = 2, d_k = d_c + d_r, heads = 2, d_nope = 3, d_vh = 2;

/// n rows of width d_k whose entries are small distinct numbers.
std::vector<double> rows(std::size_t n, double from) {
  std::vector<double> r;
  for (std::size_t i = 0; i < n * d_k; ++i) r.push_back(std::sin(from + 0.7 * double(i)));
  return r;
}
/// The query and projections of a decode over heads x (d_nope + d_r), each entry from `seed`.
struct decode_inputs {
  std::vector<double> q, w_uk, w_uv;
  explicit decode_inputs(double seed) {
    for (std::size_t i = 0; i < heads * (d_nope + d_r); ++i) q.push_back(std::cos(seed + 1.3 * double(i)));
    for (std::size_t i = 0; i < heads * d_nope * d_c; ++i) w_uk.push_back(std::sin(seed + 0.37 * double(i)));
    for (std::size_t i = 0; i < heads * d_vh * d_c; ++i) w_uv.push_back(std::cos(seed + 0.53 * double(i)));
  }
  template <class C>
  kv::decode_result run(const C& c, std::size_t s) const {
    return c.decode_step(s, {q.data(), {heads, d_nope + d_r}}, {w_uk.data(), {heads, d_nope, d_c}},
                         {w_uv.data(), {heads, d_vh, d_c}});
  }
};
}  // namespace

TEST(Latent, ValuesAreTheFirstEntriesOfTheKeyRows) {
  kv::latent c(4, 2, d_k, d_c);
  const auto s = c.create();
  const std::vector<double> k = rows(3, 0);
  c.append(s, {k.data(), {3, d_k}});
  const auto keys = c.keys(s), values = c.values(s);
  ASSERT_EQ(values.rows(), 3);
  ASSERT_EQ(values.cols(), static_cast<Eigen::Index>(d_c));
  for (Eigen::Index i = 0; i < 3; ++i)
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(d_c); ++j) EXPECT_EQ(values(i, j), keys(i, j));
  EXPECT_EQ(c.bytes_in_use(), 2 * 2 * d_k * sizeof(double));  // the rows alone: no value storage
}

TEST(Latent, AbsorbedAndMaterialisedAgree) {
  kv::latent a(8, 2, d_k, d_c);
  kv::variants::latent_materialised m(8, 2, d_k, d_c);
  const std::vector<double> k = rows(5, 1);
  const auto sa = a.create(), sm = m.create();
  a.append(sa, {k.data(), {5, d_k}}), m.append(sm, {k.data(), {5, d_k}});
  const decode_inputs in(0.25);
  const kv::decode_result x = in.run(a, sa), y = in.run(m, sm);
  ASSERT_EQ(x.output.size(), static_cast<Eigen::Index>(heads * d_vh));
  ASSERT_EQ(x.weights.size(), static_cast<Eigen::Index>(heads * 5));
  // Inputs of magnitude 1 over 4 latent entries: the two orders' rounding differs by some 1e-16, far below 1e-12
  // (the gate judges them against the bound, docs/numerics.md §3.8).
  EXPECT_LT((x.output - y.output).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((x.weights - y.weights).cwiseAbs().maxCoeff(), 1e-12);
  for (std::size_t h = 0; h < heads; ++h) EXPECT_NEAR(x.weights.segment(Eigen::Index(h * 5), 5).sum(), 1.0, 1e-12);
}

TEST(Latent, RefusesWhatDoesNotFit) {
  kv::latent c(2, 2, d_k, d_c);
  const auto s = c.create();
  const decode_inputs in(0);
  EXPECT_THROW(in.run(c, s), kv::empty_error);
  const std::vector<double> k = rows(1, 0);
  c.append(s, {k.data(), {d_k}});
  EXPECT_THROW(c.decode_step(s, {in.q.data(), {heads, d_nope}}, {in.w_uk.data(), {heads, d_nope, d_c}},
                             {in.w_uv.data(), {heads, d_vh, d_c}}),
               kv::shape_error);
  EXPECT_THROW(in.run(c, s + 1), kv::index_error);
  EXPECT_THROW(kv::latent(2, 2, d_c, d_c), kv::shape_error);  // no rotary part: d_k must exceed d_v
}

namespace {
/// Two rows stored in Format (per-tensor scale `scale` when it takes one): every key is round(given), every value its
/// key, and a block's rows take `bytes` per entry (no value storage).
template <kv::storage_format Format, class Round>
void expect_one_rounding(double scale, std::size_t bytes, Round round) {
  kv::latent_stored<Format> c(2, 4, d_k, d_c);
  if constexpr (Format.scaled) c.set_scales(scale, scale);
  const auto s = c.create();
  const std::vector<double> k = rows(2, 3);
  c.append(s, {k.data(), {2, d_k}});
  const auto keys = c.keys(s), values = c.values(s);
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(d_k); ++j) {
      EXPECT_EQ(keys(i, j), round(k[static_cast<std::size_t>(i) * d_k + static_cast<std::size_t>(j)]));
      if (j < static_cast<Eigen::Index>(d_c)) {
        EXPECT_EQ(values(i, j), keys(i, j));
      }
    }
  EXPECT_EQ(c.bytes_in_use(), 4 * d_k * bytes);
}
}  // namespace

TEST(Latent, StoredRowsExposeOneRounding) {
  expect_one_rounding<kv::formats::bf16>(1, 2, [](double x) { return kv::round_element(kv::formats::bf16, x); });
  // fp8 with the per-tensor scale 0.5: x / 0.5 in e4m3 (the rows' entries lie within 1, far from saturating), times
  // 0.5.
  constexpr kv::storage_format e4m3{.element = kv::element_format::e4m3, .overflow = kv::overflow_rule::saturate};
  expect_one_rounding<kv::formats::e4m3_scaled>(0.5, 1,
                                                [&](double x) { return 0.5 * kv::round_element(e4m3, x / 0.5); });
}

namespace {
/// A prefill of three rows onto two, against appending them one by one and decoding each with its step's heads:
/// the largest difference of an output or weight, and whether every weight past a step's own row is 0.
template <class Whole, class Stepped>
std::pair<double, bool> prefill_against_steps() {
  Whole whole(8, 2, d_k, d_c);
  Stepped stepped(8, 2, d_k, d_c);
  const std::vector<double> first = rows(2, 0.5), k = rows(3, 2);
  const auto s = whole.create(), t = stepped.create();
  whole.append(s, {first.data(), {2, d_k}}), stepped.append(t, {first.data(), {2, d_k}});
  const decode_inputs in(0.75);
  std::vector<double> q;
  for (std::size_t i = 0; i < 3; ++i) q.insert(q.end(), in.q.begin(), in.q.end());
  const kv::decode_result r =
      whole.prefill(s, {k.data(), {3, d_k}}, {q.data(), {3, heads, d_nope + d_r}},
                    {in.w_uk.data(), {heads, d_nope, d_c}}, {in.w_uv.data(), {heads, d_vh, d_c}});
  EXPECT_EQ(r.output.size(), static_cast<Eigen::Index>(3 * heads * d_vh));
  EXPECT_EQ(r.weights.size(), static_cast<Eigen::Index>(3 * heads * 5));
  double worst = 0;
  bool zeros = true;
  for (std::size_t i = 0; i < 3; ++i) {
    stepped.append(t, {k.data() + i * d_k, {d_k}});
    const kv::decode_result d = in.run(stepped, t);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t j = 0; j < d_vh; ++j)
        worst = std::max(worst, std::fabs(r.output[Eigen::Index((i * heads + h) * d_vh + j)] -
                                          d.output[Eigen::Index(h * d_vh + j)]));
      for (std::size_t j = 0; j < 5; ++j) {
        const double w = r.weights[Eigen::Index((i * heads + h) * 5 + j)];
        if (j < 3 + i)
          worst = std::max(worst, std::fabs(w - d.weights[Eigen::Index(h * (3 + i) + j)]));
        else
          zeros = zeros && w == 0;
      }
    }
  }
  return {worst, zeros};
}
}  // namespace

TEST(Latent, PrefillStepsAreDecodesOverTheRowsUpToThem) {
  // Both materialising: the same sums in the same order, equal bit for bit.
  const auto same = prefill_against_steps<kv::variants::latent_materialised, kv::variants::latent_materialised>();
  EXPECT_EQ(same.first, 0.0);
  EXPECT_TRUE(same.second);
  // The reference's prefill materialises and its decode absorbs: as in AbsorbedAndMaterialisedAgree, some 1e-16
  // apart on these magnitudes, far below 1e-12 (the gate holds both to the bound, docs/numerics.md §3.8).
  const auto orders = prefill_against_steps<kv::latent, kv::latent>();
  EXPECT_LT(orders.first, 1e-12);
  EXPECT_TRUE(orders.second);
}

TEST(Latent, RefusedPrefillChangesNothing) {
  kv::latent c(2, 2, d_k, d_c);
  const auto s = c.create();
  const decode_inputs in(0);
  const std::vector<double> k = rows(2, 0);
  // q with a step fewer than k, then a prefill past the pool: each refused before a row is written.
  EXPECT_THROW(c.prefill(s, {k.data(), {2, d_k}}, {in.q.data(), {1, heads, d_nope + d_r}},
                         {in.w_uk.data(), {heads, d_nope, d_c}}, {in.w_uv.data(), {heads, d_vh, d_c}}),
               kv::shape_error);
  const std::vector<double> many = rows(5, 1), q5(5 * in.q.size(), 0.5);
  EXPECT_THROW(c.prefill(s, {many.data(), {5, d_k}}, {q5.data(), {5, heads, d_nope + d_r}},
                         {in.w_uk.data(), {heads, d_nope, d_c}}, {in.w_uv.data(), {heads, d_vh, d_c}}),
               kv::capacity_error);
  EXPECT_EQ(c.size(s), 0u);
  EXPECT_EQ(c.free_blocks(), 2u);
}
