// Unit tests of the reference beam cache against the beam contract (docs/kinds/beam.md).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "impls/beam/beam.h"

namespace kv = kvconform;

namespace {
/// k or v shaped (B, H, n, D) whose entry (b, h, t, j) is base + 1000 b + 100 h + 10 t + j.
std::vector<double> block(std::size_t b, std::size_t h, std::size_t n, std::size_t d, double base = 0) {
  std::vector<double> x;
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t k = 0; k < h; ++k)
      for (std::size_t t = 0; t < n; ++t)
        for (std::size_t j = 0; j < d; ++j) x.push_back(base + 1000.0 * i + 100.0 * k + 10.0 * t + j);
  return x;
}
kv::array_view view(const std::vector<double>& x, std::size_t b, std::size_t h, std::size_t n, std::size_t d) {
  return {x.data(), {b, h, n, d}};
}

/// The key of position t, dimension 0, of row b and head h, as the view shows it.
double key0(const kv::beam& c, std::size_t layer, std::size_t b, std::size_t h, std::size_t t) {
  return c.keys(layer)(b, h, t, 0);
}
}  // namespace

TEST(Beam, PrefillAppendsAndReturnsViewsOfTheFilledPositions) {
  kv::beam c(2, 2, 1, 4, 2);
  const auto k = block(2, 1, 3, 2), v = block(2, 1, 3, 2, 0.5);
  const auto [ks, vs] = c.update(0, view(k, 2, 1, 3, 2), view(v, 2, 1, 3, 2), 0);
  EXPECT_EQ(ks.dimension(0), 2u);
  EXPECT_EQ(ks.dimension(1), 1u);
  EXPECT_EQ(ks.dimension(2), 3u);
  EXPECT_EQ(ks.dimension(3), 2u);
  EXPECT_EQ(ks(1, 0, 2, 1), 1021.0);
  EXPECT_EQ(vs(1, 0, 2, 1), 1021.5);
  EXPECT_EQ(c.length(0), 3u);
  EXPECT_EQ(c.length(1), 0u);  // layers keep their own lengths
  const auto k1 = block(2, 1, 1, 2, 7), v1 = block(2, 1, 1, 2, 7);
  c.update(0, view(k1, 2, 1, 1, 2), view(v1, 2, 1, 1, 2), 3);  // a decode step ends exactly at max_len
  EXPECT_EQ(c.length(0), 4u);
  EXPECT_EQ(key0(c, 0, 1, 0, 3), 1007.0);
}

TEST(Beam, AStartBelowTheLengthTruncatesFirst) {
  kv::beam c(1, 1, 1, 5, 1);
  const auto k = block(1, 1, 4, 1), k2 = block(1, 1, 2, 1, 0.25), none = block(1, 1, 0, 1);
  c.update(0, view(k, 1, 1, 4, 1), view(k, 1, 1, 4, 1), 0);
  const auto [ks, vs] =
      c.update(0, view(k2, 1, 1, 2, 1), view(k2, 1, 1, 2, 1), 1);  // roll back three draft tokens, accept two
  EXPECT_EQ(ks.dimension(2), 3u);
  EXPECT_EQ(c.length(0), 3u);
  EXPECT_EQ(key0(c, 0, 0, 0, 0), 0.0);
  EXPECT_EQ(key0(c, 0, 0, 0, 1), 0.25);
  EXPECT_EQ(key0(c, 0, 0, 0, 2), 10.25);
  c.update(0, view(none, 1, 1, 0, 1), view(none, 1, 1, 0, 1), 0);  // n = 0 only truncates
  EXPECT_EQ(c.length(0), 0u);
}

TEST(Beam, RefusedUpdatesAndReordersChangeNothing) {
  kv::beam c(2, 2, 1, 3, 1);
  const auto k = block(2, 1, 2, 1), bad = block(2, 2, 1, 1);
  c.update(0, view(k, 2, 1, 2, 1), view(k, 2, 1, 2, 1), 0);
  EXPECT_THROW(c.update(0, view(k, 2, 1, 2, 1), view(k, 2, 1, 2, 1), 3), kv::index_error);  // start beyond the length
  EXPECT_THROW(c.update(0, view(k, 2, 1, 2, 1), view(k, 2, 1, 2, 1), 2), kv::capacity_error);   // 2 + 2 > 3
  EXPECT_THROW(c.update(2, view(k, 2, 1, 2, 1), view(k, 2, 1, 2, 1), 0), kv::index_error);      // no layer 2
  EXPECT_THROW(c.update(0, view(bad, 2, 2, 1, 1), view(bad, 2, 2, 1, 1), 0), kv::shape_error);  // two heads
  EXPECT_THROW(c.update(0, view(k, 2, 1, 2, 1), view(k, 2, 1, 1, 1), 0), kv::shape_error);  // k and v differ in steps
  const std::vector<std::int64_t> out_of_range{0, 2}, too_few{0};
  EXPECT_THROW(c.reorder(out_of_range), kv::index_error);
  EXPECT_THROW(c.reorder(too_few), kv::shape_error);
  EXPECT_EQ(c.length(0), 2u);
  EXPECT_EQ(key0(c, 0, 1, 0, 1), 1010.0);
  EXPECT_EQ(key0(c, 0, 0, 0, 1), 10.0);
}

TEST(Beam, ReorderGathersEveryLayerAndRepeatedRowsDoNotAlias) {
  kv::beam c(2, 3, 1, 4, 1);
  const auto k = block(3, 1, 1, 1);
  for (std::size_t l = 0; l < 2; ++l) c.update(l, view(k, 3, 1, 1, 1), view(k, 3, 1, 1, 1), 0);
  const std::vector<std::int64_t> idx{2, 2, 0};  // row 2 repeats, row 1 is dropped
  c.reorder(idx);
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(key0(c, l, 0, 0, 0), 2000.0);
    EXPECT_EQ(key0(c, l, 1, 0, 0), 2000.0);
    EXPECT_EQ(key0(c, l, 2, 0, 0), 0.0);
  }
  const auto step = block(3, 1, 1, 1, 5);
  c.update(1, view(step, 3, 1, 1, 1), view(step, 3, 1, 1, 1), 1);  // each twin gets its own next token
  EXPECT_EQ(key0(c, 1, 0, 0, 1), 5.0);
  EXPECT_EQ(key0(c, 1, 1, 0, 1), 1005.0);
  EXPECT_EQ(key0(c, 1, 0, 0, 0), 2000.0);
}

TEST(Beam, GroupedQueryHeadsReadTheirKvHeadAndPaddingTakesNoWeight) {
  kv::beam c(1, 2, 2, 3, 1);  // H = 2
  const std::vector<double> k(2 * 2 * 3, 1.0);
  std::vector<double> v;
  for (double b : {0.0, 1.0})
    for (double h : {0.0, 1.0})
      for (double t : {0.0, 1.0, 2.0}) v.push_back(100 * b + 10 * h + t);
  c.update(0, view(k, 2, 2, 3, 1), view(v, 2, 2, 3, 1), 0);
  const std::vector<double> q(2 * 4 * 1, 0.5);  // Hq = 4: query heads 0, 1 read kv head 0; 2, 3 read kv head 1
  const std::vector<double> mask{0, 1, 1,       // row 0: one position of left padding
                                 0, 0, 0};      // row 1: fully masked
  const auto d = c.decode(0, {q.data(), {2, 4, 1}}, {mask.data(), {2, 3}});
  ASSERT_EQ(d.output.size(), 8);
  ASSERT_EQ(d.weights.size(), 2 * 4 * 3);
  EXPECT_EQ(d.output[0], 1.5);  // mean of kv head 0's unpadded values 1 and 2
  EXPECT_EQ(d.output[1], 1.5);
  EXPECT_EQ(d.output[2], 11.5);  // kv head 1
  EXPECT_EQ(d.output[3], 11.5);
  EXPECT_EQ(d.weights[0], 0.0);
  EXPECT_EQ(d.weights[1], 0.5);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(d.output[i], 0.0) << "fully masked row, never NaN";
  for (int i = 12; i < 24; ++i) EXPECT_EQ(d.weights[i], 0.0);
  const auto all = c.decode(0, {q.data(), {2, 4, 1}}, {});
  EXPECT_EQ(all.output[4], 101.0);  // no mask: row 1, kv head 0 weighs 100, 101, 102 equally
}

TEST(Beam, DecodeRefusesBadLayersShapesAndEmptyLayers) {
  kv::beam c(2, 1, 2, 2, 1);
  const std::vector<double> k(4, 1.0), q3(3, 1.0), q2(2, 1.0), mask(3, 1.0);
  c.update(0, view(k, 1, 2, 2, 1), view(k, 1, 2, 2, 1), 0);
  EXPECT_THROW(c.decode(1, {q2.data(), {1, 2, 1}}, {}), kv::empty_error);
  EXPECT_THROW(c.decode(2, {q2.data(), {1, 2, 1}}, {}), kv::index_error);
  EXPECT_THROW(c.decode(0, {q3.data(), {1, 3, 1}}, {}), kv::shape_error);  // 3 query heads over 2 kv heads
  EXPECT_THROW(c.decode(0, {q2.data(), {2, 1}}, {}), kv::shape_error);
  EXPECT_THROW(c.decode(0, {q2.data(), {1, 2, 1}}, {mask.data(), {1, 3}}),
               kv::shape_error);  // mask longer than the layer
}

TEST(Beam, MemoryFormulas) {
  const kv::beam c(2, 3, 2, 5, 4);
  EXPECT_EQ(c.bytes(), 2u * 2 * 3 * 2 * 5 * 4 * sizeof(double));
  EXPECT_EQ(c.bytes_per_token(), 2u * 2 * 2 * 4 * sizeof(double));  // 256
  EXPECT_EQ(c.max_batch_tokens(1 << 20), 4096u);
  EXPECT_EQ(c.max_batch_tokens(255), 0u);
}

TEST(Beam, PrefillAttendsCausallyAfterTheHeldPositions) {
  kv::beam c(1, 2, 1, 4, 1);
  const std::vector<double> held{1, 2};  // one position held in each row: values 1 and 2
  c.update(0, view(held, 2, 1, 1, 1), view(held, 2, 1, 1, 1), 0);
  const std::vector<double> k(2 * 2, 0.0), v{10, 20, 30, 40}, q(2 * 2 * 2, 0.0);  // q = 0: equal scores
  const std::vector<double> mask{1, 1, 1,   // row 0 sees everything up to its own position
                                 0, 1, 1};  // row 1 hides its held position
  // Hq = 2 query heads over one kv head; queries at positions 1 and 2 of each row.
  const auto d =
      c.prefill(0, view(k, 2, 1, 2, 1), view(v, 2, 1, 2, 1), {q.data(), {2, 2, 2, 1}}, {mask.data(), {2, 3}});
  EXPECT_EQ(c.length(0), 3u);
  EXPECT_EQ(c.values(0)(1, 0, 2, 0), 40.0);
  ASSERT_EQ(d.output.size(), 2 * 2 * 2);
  ASSERT_EQ(d.weights.size(), 2 * 2 * 2 * 3);
  const std::vector<double> output{5.5, 31.0 / 3, 5.5, 31.0 / 3,
                                   30,  35,       30,  35};  // (b, h, i): the mean of what query i sees
  for (std::size_t i = 0; i < output.size(); ++i) EXPECT_DOUBLE_EQ(d.output[static_cast<Eigen::Index>(i)], output[i]);
  EXPECT_EQ(d.weights[2], 0.0);   // row 0, query 0: not position 2, after its own
  EXPECT_EQ(d.weights[12], 0.0);  // row 1: the masked position
  EXPECT_EQ(d.weights[13], 1.0);  // row 1, query 0: its own position alone
  EXPECT_EQ(d.weights[14], 0.0);
}

TEST(Beam, RefusedPrefillsChangeNothingAndAnEmptyOneIsAccepted) {
  kv::beam c(1, 1, 2, 3, 1);
  const std::vector<double> k(4, 1.0), q(4, 1.0), q3(6, 1.0), mask(2, 1.0), none;
  const kv::array_view kv2 = view(k, 1, 2, 2, 1), q2{q.data(), {1, 2, 2, 1}};
  EXPECT_THROW(c.prefill(1, kv2, kv2, q2, {}), kv::index_error);
  EXPECT_THROW(c.prefill(0, kv2, kv2, {q3.data(), {1, 3, 2, 1}}, {}), kv::shape_error);  // 3 query heads over 2
  EXPECT_THROW(c.prefill(0, kv2, kv2, {q.data(), {1, 2, 1, 2}}, {}), kv::shape_error);   // one query of width 2
  EXPECT_THROW(c.prefill(0, kv2, kv2, q2, {mask.data(), {1, 1, 2}}), kv::shape_error);
  EXPECT_THROW(c.prefill(0, kv2, kv2, q2, {mask.data(), {1, 0}}), kv::shape_error);  // (B, length), not + m
  c.prefill(0, kv2, kv2, q2, {mask.data(), {1, 2}});
  EXPECT_THROW(c.prefill(0, kv2, kv2, q2, {}), kv::capacity_error);  // 2 + 2 > 3
  const auto empty = c.prefill(0, view(none, 1, 2, 0, 1), view(none, 1, 2, 0, 1), {none.data(), {1, 2, 0, 1}}, {});
  EXPECT_EQ(empty.output.size() + empty.weights.size(), 0);
  EXPECT_EQ(c.length(0), 2u);
}
